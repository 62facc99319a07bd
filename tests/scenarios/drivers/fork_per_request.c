/* Fork-per-request on one pipe: the parent forks a fresh child for each
 * request and reads its one-byte answer from the pipe they share.  20 quick
 * requests (5 ms of work each), then one that computes for 3 s.  Every
 * earlier child woke the parent through the same pipe, so an earlier wait is
 * a perfect "same object" baseline; the child busy now is the root cause.
 * Prints {"pid", "tid", "child"} (the slow child) before the slow read. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static void spin(double s)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}

int main(void)
{
	int p[2];
	char x = 'x';

	if (pipe(p))
		return 1;
	for (int i = 0; i <= 20; i++) {
		pid_t c = fork();

		if (c < 0)
			return 1;
		if (c == 0) {
			spin(i == 20 ? 3.0 : 0.005);
			if (write(p[1], &x, 1) != 1)
				_exit(1);
			_exit(0);
		}
		if (i == 20) {
			printf("{\"pid\": %d, \"tid\": %d, \"child\": %d}\n", getpid(), getpid(), c);
			fflush(stdout);
		}
		if (read(p[0], &x, 1) != 1)
			return 1;
		waitpid(c, NULL, 0);
		usleep(20000);
	}
	return 0;
}
