/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ret_deref.h as data: the text forms hooks/hookspec.py writes (xcb.json's
 * X11 input included) against real event bytes, and malformed text that
 * must be refused.  Exit 0 when every case holds; one line per failure.
 */
#include "ret_deref.h"

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		if (!(cond)) {                                      \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);               \
			fputc('\n', stderr);                        \
			failures++;                                 \
		}                                                   \
	} while (0)

/* The X11 input deref of hooks/xcb.json, as hookspec.flatten writes it. */
static const char X11[] = "0:1:127:2.3.4.5;0:8:0|0:1:127:35,8:2:65535:2.3.4.5;8:1:0,16:1:1,2:2:2,12:4:4";

static void test_x11(void)
{
	struct argus_ret_deref d;
	uint64_t obj = 0;
	CHECK(argus_ret_deref_parse(X11, &d) == 0 && d.nalts == 2, "the X11 deref parses");

	/* core KeyPress: code 2, keycode 65, sequence 0x00f8, time 0x0156be7b */
	uint8_t core[32] = {2, 65, 0xf8, 0x00, 0x7b, 0xbe, 0x56, 0x01};
	CHECK(argus_ret_deref_apply(&d, (uint64_t)core, &obj) == 1 && obj == 0x0156be7b00f84102ull,
	      "core key press: obj %#llx", (unsigned long long)obj);
	core[0] = 0x80 | 4;   /* a ButtonPress sent with XSendEvent: kept, bit 7 stays */
	CHECK(argus_ret_deref_apply(&d, (uint64_t)core, &obj) == 1 && (obj & 0xff) == 0x84, "synthetic button");
	core[0] = 6;          /* MotionNotify */
	CHECK(argus_ret_deref_apply(&d, (uint64_t)core, &obj) == 0, "motion is not recorded");

	/* XI2 key release (GenericEvent 35, extension 131, evtype 3), detail 38, time 0x01020304 */
	uint8_t xi2[64] = {35, 131, 0x10, 0x00, 4, 0, 0, 0, 3, 0, 2, 0, 0x04, 0x03, 0x02, 0x01, 38, 0, 0, 0};
	CHECK(argus_ret_deref_apply(&d, (uint64_t)xi2, &obj) == 1 && obj == 0x0102030400102603ull,
	      "XI2 key release: obj %#llx", (unsigned long long)obj);
	xi2[8] = 6;           /* XI_Motion */
	CHECK(argus_ret_deref_apply(&d, (uint64_t)xi2, &obj) == 0, "XI2 motion is not recorded");
	CHECK(argus_ret_deref_apply(&d, 0, &obj) == 0, "NULL records nothing");
}

static void test_forms(void)
{
	struct argus_ret_deref d;
	uint64_t obj = 0;
	uint8_t rec[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	/* no condition: always; a 4-byte value compared under a mask */
	CHECK(argus_ret_deref_parse(";8:8:0", &d) == 0 && argus_ret_deref_apply(&d, (uint64_t)rec, &obj) == 1 &&
	      obj == 0x100f0e0d0c0b0a09ull, "unconditional 8 bytes at 8");
	CHECK(argus_ret_deref_parse("0:4:65535:513;1:1:7", &d) == 0 && argus_ret_deref_apply(&d, (uint64_t)rec, &obj) == 1 &&
	      obj == 0x0200000000000000ull, "masked 4-byte condition, byte to 7");
	CHECK(argus_ret_deref_parse("0:2:65535:1;0:1:0", &d) == 0 && argus_ret_deref_apply(&d, (uint64_t)rec, &obj) == 0,
	      "2-byte value 0x0201 is not 1");
	const char *bad[] = {
		"", ";", "0:1:255:2", "0:3:255:2;0:1:0", "0:1:255:;0:1:0", "0:1:255:2;0:9:0", "0:1:255:2;0:4:5",
		"0:1:255:2;0:1:0|", "0:1:255:1.2.3.4.5.6.7.8.9;0:1:0", "4097:1:255:2;0:1:0", "0:1:255:2;0:1:0x",
		";0:1:0|;0:1:0|;0:1:0|;0:1:0|;0:1:0", "-1:1:255:2;0:1:0", "0:1:255:2;0:1:0,0:1:1,0:1:2,0:1:3,0:1:4",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(argus_ret_deref_parse(bad[i], &d) != 0, "refused: \"%s\"", bad[i]);
}

int main(void)
{
	test_x11();
	test_forms();
	if (failures)
		return 1;
	printf("ret_deref: all cases hold\n");
	return 0;
}
