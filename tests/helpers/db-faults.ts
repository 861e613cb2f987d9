/**
 * Database faults at a named step, injected in the database itself (so the code under test needs no
 * seam): a trigger that makes every INSERT or UPDATE of a table fail like a refused write (the way a
 * NUL byte, a constraint or an outage makes it fail). Works on PGlite and PostgreSQL.
 */
type Db = { $executeRawUnsafe(sql: string): Promise<number> };

/** Make writes of `op` on `table` fail until the returned function is called. */
export async function failWrites(db: Db, table: 'listings' | 'chain_intents', op: 'INSERT' | 'UPDATE'): Promise<() => Promise<void>> {
  const name = `bazaar_test_fail_${table}_${op.toLowerCase()}`;
  await db.$executeRawUnsafe(`
    CREATE OR REPLACE FUNCTION bazaar_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'injected fault: % on %', TG_OP, TG_TABLE_NAME;
    END $$`);
  await db.$executeRawUnsafe(`CREATE TRIGGER ${name} BEFORE ${op} ON ${table} FOR EACH ROW EXECUTE FUNCTION bazaar_test_fail()`);
  return async () => {
    await db.$executeRawUnsafe(`DROP TRIGGER IF EXISTS ${name} ON ${table}`);
  };
}
