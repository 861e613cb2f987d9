import { afterEach, describe, expect, it, vi } from 'vitest';
import { Poller } from './poller';

afterEach(() => vi.useRealTimers());

describe('Poller', () => {
  it('runs at once when immediate, then every interval, never overlapping a running pass', async () => {
    vi.useFakeTimers();
    let calls = 0;
    let release: () => void = () => {};
    const p = new Poller(
      () => {
        calls++;
        return new Promise<void>((r) => (release = r));
      },
      () => {},
      { immediate: true },
    );
    p.start(1000);
    expect(calls).toBe(1); // the first pass starts within start()
    await vi.advanceTimersByTimeAsync(3000); // three ticks while the first pass still runs
    expect(calls).toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(2);
    release();
    await p.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls).toBe(2);
  });

  it('waits for the first interval unless immediate; 0 = first pass only', async () => {
    vi.useFakeTimers();
    const lazy = vi.fn(async () => {});
    const a = new Poller(lazy, () => {});
    a.start(500);
    await vi.advanceTimersByTimeAsync(499);
    expect(lazy).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(lazy).toHaveBeenCalledTimes(1);
    await a.stop();

    const once = vi.fn(async () => {});
    const b = new Poller(once, () => {}, { immediate: true });
    b.start(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(once).toHaveBeenCalledTimes(1);
    await b.stop();
  });

  it('reschedule changes the interval of a running loop from now on; no-op when stopped', async () => {
    vi.useFakeTimers();
    const pass = vi.fn(async () => {});
    const p = new Poller(pass, () => {});
    p.start(1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(pass).toHaveBeenCalledTimes(1);
    p.reschedule(10_000);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(pass).toHaveBeenCalledTimes(2);
    p.reschedule(0); // trigger only
    await vi.advanceTimersByTimeAsync(60_000);
    expect(pass).toHaveBeenCalledTimes(2);
    p.trigger();
    expect(pass).toHaveBeenCalledTimes(3);
    await p.stop();
    p.reschedule(100);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(pass).toHaveBeenCalledTimes(3);
  });

  it('reports a failing pass and keeps going; stop() waits for the pass in progress', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let n = 0;
    let finished = false;
    const p = new Poller(
      async () => {
        n++;
        if (n === 1) throw new Error('rpc down');
        await new Promise((r) => setTimeout(r, 200));
        finished = true;
      },
      (err) => errors.push(err),
    );
    p.start(100);
    await vi.advanceTimersByTimeAsync(100);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('rpc down');
    await vi.advanceTimersByTimeAsync(100);
    expect(p.busy).toBe(true);
    const stopped = p.stop();
    await vi.advanceTimersByTimeAsync(200);
    await stopped;
    expect(finished).toBe(true);
    expect(p.busy).toBe(false);
  });
});
