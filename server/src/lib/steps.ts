/**
 * Steps with compensation, the unit use cases are composed of (docs/design.md "Use cases"; the idea is
 * Medusa v2's workflow steps, https://docs.medusajs.com/learn/fundamentals/workflows/compensation-function,
 * without its engine: our steps run in-process and their durable record is the database row each step
 * writes, e.g. a ChainIntent or a custody transfer, which the module's reconciler picks up after a crash).
 */

/**
 * Run one step; when it throws, run its compensation with the error (undo what the step or the steps
 * before it left that nobody may see: a discarded order row, a released hold), then rethrow the step's
 * error. A compensation that throws itself is reported to `onCompensationError` (default: ignored), and
 * the step's error is still the one thrown: the caller learns why the use case failed, the reconciler
 * finishes what the compensation could not.
 */
export async function compensated<T>(
  step: () => Promise<T>,
  compensate: (err: unknown) => Promise<unknown>,
  onCompensationError: (err: unknown) => void = () => undefined,
): Promise<T> {
  try {
    return await step();
  } catch (err) {
    await compensate(err).catch(onCompensationError);
    throw err;
  }
}
