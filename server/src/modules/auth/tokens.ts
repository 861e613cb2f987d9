/**
 * Access tokens: JWT HS256 (jose). Claims: sub = user id, wallet, iat, exp, iss/aud = the service, jti = a
 * random id, so two logins of one wallet in the same second get two tokens (logout revokes one session).
 */
import { randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';

export const JWT_ISSUER = 'bazaar';
export const JWT_AUDIENCE = 'bazaar-api';

export interface AccessClaims {
  sub: string;
  wallet: string;
}

/** Claims of a verified token: AccessClaims plus its expiry (`exp`, Unix seconds). */
export interface VerifiedClaims extends AccessClaims {
  exp: number;
}

const keyOf = (secret: string) => new TextEncoder().encode(secret);

export async function signAccessToken(
  claims: AccessClaims,
  secret: string,
  ttlSeconds: number,
  now: Date,
): Promise<{ token: string; expiresAt: Date }> {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + ttlSeconds;
  const token = await new SignJWT({ wallet: claims.wallet })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(randomUUID())
    .sign(keyOf(secret));
  return { token, expiresAt: new Date(exp * 1000) };
}

export type VerifyResult = { ok: true; claims: VerifiedClaims } | { ok: false; reason: 'expired' | 'invalid' };

export async function verifyAccessToken(token: string, secret: string, now: Date): Promise<VerifyResult> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: ['HS256'],
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      currentDate: now,
      requiredClaims: ['sub', 'exp'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.wallet !== 'string') return { ok: false, reason: 'invalid' };
    return { ok: true, claims: { sub: payload.sub, wallet: payload.wallet, exp: Number(payload.exp) } };
  } catch (e) {
    if (e instanceof errors.JWTExpired) return { ok: false, reason: 'expired' };
    return { ok: false, reason: 'invalid' };
  }
}
