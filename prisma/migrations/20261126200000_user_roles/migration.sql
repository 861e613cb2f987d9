-- Issue 25 part 1: operator roles on users. A user may hold several of admin, arbiter, moderator
-- (contract OPERATOR_ROLES); `users.roles` is the one statement of them, read on every request.
--
-- `users.role` stays for one release, deprecated: replicas still running the code before this change
-- read it (Prisma selects every column of users), and a rolling upgrade must not break them. The trigger
-- keeps it in step: role = 'admin' iff roles holds admin. A write of `role` alone (old code, a hand-run
-- `UPDATE users SET role = 'admin'`) maps to roles as the old meaning had it: today's admin does all three
-- jobs, so 'admin' -> {admin, arbiter, moderator} and 'user' -> {}. Roles are kept sorted, without duplicates.

-- AlterTable
ALTER TABLE "users" ADD COLUMN "roles" TEXT[] DEFAULT ARRAY[]::TEXT[];
UPDATE "users" SET "roles" = ARRAY['admin', 'arbiter', 'moderator']::TEXT[] WHERE "role" = 'admin';
UPDATE "users" SET "roles" = ARRAY[]::TEXT[] WHERE "roles" IS NULL;
ALTER TABLE "users" ALTER COLUMN "roles" SET NOT NULL;
ALTER TABLE "users" ADD CONSTRAINT "users_roles_check" CHECK ("roles" <@ ARRAY['admin', 'arbiter', 'moderator']::TEXT[]);

CREATE FUNCTION users_roles_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- a value of role the old CHECK (users_role_check) refuses is left for it to refuse
  IF NEW.role IS NULL OR NEW.role NOT IN ('admin', 'user') THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.role IS DISTINCT FROM OLD.role AND NEW.roles IS NOT DISTINCT FROM OLD.roles THEN
    -- a legacy writer changed role alone
    NEW.roles := CASE WHEN NEW.role = 'admin' THEN ARRAY['admin', 'arbiter', 'moderator']::TEXT[] ELSE ARRAY[]::TEXT[] END;
  ELSIF TG_OP = 'INSERT' AND NEW.role = 'admin' AND cardinality(NEW.roles) = 0 THEN
    NEW.roles := ARRAY['admin', 'arbiter', 'moderator']::TEXT[];
  END IF;
  NEW.roles := ARRAY(SELECT DISTINCT r FROM unnest(NEW.roles) AS r ORDER BY r);
  NEW.role := CASE WHEN 'admin' = ANY (NEW.roles) THEN 'admin' ELSE 'user' END;
  RETURN NEW;
END;
$$;

CREATE TRIGGER users_roles_sync BEFORE INSERT OR UPDATE OF role, roles ON "users"
  FOR EACH ROW EXECUTE FUNCTION users_roles_sync();

-- operators are few: find them without a scan (the last-admin guard counts the admins)
CREATE INDEX "users_roles_idx" ON "users" USING GIN ("roles");
