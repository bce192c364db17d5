/* A test-only hook: TRILLIAN_TEST_FAULT=ACTION@POINT stops trillian, or
 * fails a step as a full disk would, at one exact point of committing or
 * publishing, so the tests of a kill or a full disk there need no timing
 * (docs/engine.md, "Test hook"). Unset, it does nothing. */
#ifndef TRILLIAN_TESTHOOK_H
#define TRILLIAN_TESTHOOK_H

/* At POINT ("commit", "publish", "published"): with ACTION stop, says so
 * on stderr and stops this process (SIGSTOP) until SIGCONT, returning 0;
 * with ACTION enospc, returns -1 with errno ENOSPC for the caller to fail
 * as it would on a full disk. Otherwise returns 0. */
int test_hook(const char *point);

#endif
