-- Issue 20: a webhook endpoint is tied to the credential that created it (a personal access token or an
-- API key; NULL for a session): revoked -> the endpoint is disabled, the token's scopes filter its events.
-- Endpoints that exist already are tied to no credential (as if created with a session).

-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "api_key_id" UUID,
ADD COLUMN     "token_id" UUID;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_token_id_fkey" FOREIGN KEY ("token_id") REFERENCES "personal_access_tokens"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
