import { describe, expect, it } from 'vitest';
import { BackendError } from '../errors/index.js';
import { type RetryOptions, withRetry } from './retry.js';

const refused = (attempts: { count: number }) => async () => {
  attempts.count++;
  throw new Error('ECONNREFUSED');
};

describe('withRetry with a deadline (a call bounded as a whole)', () => {
  const options = (deadline: number): RetryOptions => ({
    backend: 'test',
    operation: 'get',
    retry: { initialDelayMs: 40, maxRetries: 10 },
    random: () => 1, // no jitter: waits of 40, 80, 160 ms
    deadline,
    classify: () => ({ retryable: true, reason: 'connection failed' }),
  });

  it('retries while the next wait ends before the deadline, then throws the real failure', async () => {
    const attempts = { count: 0 };
    const started = Date.now();
    const error = await withRetry(refused(attempts), options(started + 200)).catch(
      (caught: unknown) => caught,
    );
    // Waits of 40 and 80 ms fit; the next, 160 ms, would end past the deadline.
    expect(attempts.count).toBe(3);
    expect(Date.now() - started).toBeLessThan(200);
    expect(BackendError.isInstance(error)).toBe(true);
    expect((error as BackendError).message).toMatch(
      /: gave up after 3 attempts; the last failed with connection failed$/,
    );
    expect((error as BackendError).retryable).toBe(true);
    expect((error as BackendError).cause).toMatchObject({ message: 'ECONNREFUSED' });
  });

  it('reports a failure with no time left for a retry as it is', async () => {
    const attempts = { count: 0 };
    const error = await withRetry(refused(attempts), options(Date.now() + 10)).catch(
      (caught: unknown) => caught,
    );
    expect(attempts.count).toBe(1);
    expect((error as BackendError).message).toMatch(/: connection failed$/);
    expect((error as BackendError).retryable).toBe(true);
  });
});
