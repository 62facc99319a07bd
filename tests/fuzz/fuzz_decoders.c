// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harnesses for the decoders of untrusted input, one source built
 * once per target (tests/fuzz/run.sh, -DFUZZ_<TARGET>), with ASan + UBSan:
 *
 *   rb_decode      the input is a ring buffer file: argus_decode_file
 *   rb_window      8 bytes since, 8 until, 8 type mask (bit 63: keep_state),
 *                  then a ring buffer file: argus_decode_file_opts
 *   kdebug_v1      a kdebug RAW_VERSION1 file (the magic is forced) imported
 *   kdebug_v3      a kdebug V3 file (the magic is forced) imported
 *
 * The decoders take paths (they map or pread the file, as they would a real
 * buffer), so each input is written to a file in a private directory
 * (ARGUS_FUZZ_DIR, else a new one under /tmp) and the kdebug import's output
 * buffer is removed after each run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argus_decode.h"
#include "kdebug.h"
#include "kdebug_file.h"

static char in_path[4096], out_path[4096];

static void setup(void)
{
	static char tmpl[] = "/tmp/argus-fuzz-XXXXXX";
	const char *dir = getenv("ARGUS_FUZZ_DIR");

	if (in_path[0])
		return;
	if (!dir && !(dir = mkdtemp(tmpl))) {
		perror("mkdtemp");
		abort();
	}
	snprintf(in_path, sizeof in_path, "%s/input.%d", dir, (int)getpid());
	snprintf(out_path, sizeof out_path, "%s/output.%d.argus", dir, (int)getpid());
}

static void write_input(const uint8_t *data, size_t size, const void *magic, size_t magic_len)
{
	int fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		perror(in_path);
		abort();
	}
	if (magic && size >= magic_len) {
		if (write(fd, magic, magic_len) != (ssize_t)magic_len)
			abort();
		data += magic_len;
		size -= magic_len;
	}
	while (size) {
		ssize_t n = write(fd, data, size);
		if (n <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
#if defined(FUZZ_RB_DECODE)
	struct argus_decode_result res;

	write_input(data, size, NULL, 0);
	argus_decode_file(in_path, &res);
	argus_decode_free(&res);
#elif defined(FUZZ_RB_WINDOW)
	struct argus_decode_result res;
	struct argus_decode_opts o = { 0 };
	uint64_t mask;

	if (size < 24)
		return 0;
	memcpy(&o.since_ns, data, 8);
	memcpy(&o.until_ns, data + 8, 8);
	memcpy(&mask, data + 16, 8);
	o.type_mask = mask & ~(1ull << 63);
	o.keep_state = (int)(mask >> 63);
	write_input(data + 24, size - 24, NULL, 0);
	argus_decode_file_opts(in_path, &o, &res);
	argus_decode_free(&res);
#elif defined(FUZZ_KDEBUG_V1) || defined(FUZZ_KDEBUG_V3)
#if defined(FUZZ_KDEBUG_V1)
	const uint32_t magic = KD_RAW_VERSION1;
#else
	const uint32_t magic = KD_V3_HEADER;
#endif
	struct argus_kdebug_import_opts o = { 0 };
	struct argus_kdebug_import_result r;

	o.trace_syscalls = 1;
	write_input(data, size, &magic, sizeof magic);
	unlink(out_path);
	argus_kdebug_import(in_path, out_path, &o, &r);
	unlink(out_path);
#else
#error "build with -DFUZZ_RB_DECODE, -DFUZZ_RB_WINDOW, -DFUZZ_KDEBUG_V1 or -DFUZZ_KDEBUG_V3"
#endif
	return 0;
}
