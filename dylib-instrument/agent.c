/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The LD_PRELOAD agent (libargus-agent.so) that `argus run -- CMD` puts into
 * a program.  Its constructor reads the hook list `argus run` flattened from
 * the hook spec (the JSON files of hooks/), installs every hook whose symbol
 * is loaded, and retries the missing ones after each dlopen (the agent's
 * dlopen wraps the real one).  Inert without ARGUS_URING_DIR and ARGUS_HOOKS.
 *
 * Hook list: one hook a line, tab separated:
 *   probe_id  symbol  enter_type  return_type  library  [obj_arg  null_obj  [return_obj  [obj_bits  [ret_deref]]]]
 * (types are the numbers of tracer/ringbuf/argus_event.h, 0 = none; library is the
 * soname the symbol must come from, "-" for the first definition found;
 * obj_arg the integer argument recorded as obj, default 0; null_obj "-" or
 * a function of no arguments in the same library, called once when the hook
 * is installed: its result is recorded in place of a NULL obj, e.g. GLib's
 * g_main_context_default for the functions where NULL means that context);
 * obj_arg 6 = the process key, return_obj the return record's obj (0 the
 * return value, default; 1-6 argument 0-5 saved at entry; 7 the process key),
 * obj_bits 32 or 64 (32: the low half of obj, for 32-bit arguments / results);
 * ret_deref "-" or the text form of ret_deref.h: the return record reads
 * its obj through the returned pointer, and only matching returns record.
 * A line that does not parse is skipped.
 * A library that is no loaded soname may be the program itself: its file's
 * base name (python3.11 defines CPython's API).  A library may be an
 * fnmatch(3) pattern (libpython3.[0-9][0-9].so.1.0): it names the first
 * loaded object whose file's base name matches, or the program.  Lines with
 * the same probe id are one hook's library alternatives.  A hook the
 * relocator refuses is reported once on stderr with ARGUS_AGENT_VERBOSE=1
 * and skipped: the program keeps running without it.
 */
#include "hook.h"
#include "recorder.h"
#include "reloc.h"
#include "ret_deref.h"

#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_HOOKS 128

struct planned_hook {
	char symbol[256];    /* C++ names are long: node::InternalMakeCallback's is 160 */
	char library[128];   /* "" = any */
	char null_obj[128];  /* "" = none */
	struct argus_ret_deref deref;   /* nalts 0 = none */
	struct argus_hook_spec spec;
	struct argus_hook hook;
	int state;   /* 0 not found yet, 1 installed, -1 refused */
};

static struct planned_hook plan[MAX_HOOKS];
static int nplan;
static int verbose;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

static int read_plan(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[2048], deref[768];   /* hookspec.py keeps a ret_deref under 768 characters */
	while (nplan < MAX_HOOKS && fgets(line, sizeof(line), f)) {
		struct planned_hook *p = &plan[nplan];
		unsigned id, enter, ret, obj_arg = 0, return_obj = 0, obj_bits = 64;
		int n = line[0] == '#' ? 0 : sscanf(line, "%u\t%255s\t%u\t%u\t%127s\t%u\t%127s\t%u\t%u\t%767s", &id,
						     p->symbol, &enter, &ret, p->library, &obj_arg, p->null_obj,
						     &return_obj, &obj_bits, deref);
		if ((n != 5 && n != 7 && n != 8 && n != 9 && n != 10) || (obj_bits != 32 && obj_bits != 64) ||
		    obj_arg > ARGUS_HOOK_OBJ_PROCESS || return_obj > ARGUS_HOOK_RETURN_PROCESS)
			continue;
		p->deref.nalts = 0;
		if (n == 10 && strcmp(deref, "-") != 0 && argus_ret_deref_parse(deref, &p->deref))
			continue;
		p->spec.ret_deref = p->deref.nalts ? &p->deref : NULL;
		if (strcmp(p->library, "-") == 0)
			p->library[0] = 0;
		if (n == 5 || strcmp(p->null_obj, "-") == 0)
			p->null_obj[0] = 0;
		p->spec.obj_arg = (uint8_t)obj_arg;
		p->spec.return_obj = (uint8_t)return_obj;
		p->spec.obj32 = obj_bits == 32;
		p->spec.probe_id = id;
		p->spec.enter_type = (uint16_t)enter;
		p->spec.return_type = (uint16_t)ret;
		nplan++;
	}
	fclose(f);
	return 0;
}

/* The symbol's size bounds the prologue read and the branch-back scan. */
static size_t symbol_size(void *addr)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && info.dli_saddr == addr)
		return sym->st_size;
	return 0;
}

static void *(*real_dlopen)(const char *, int);
static char exe_name[128];   /* the program file's base name (/proc/self/exe) */

/* Whether addr lies in the program file's own segments (the first object
 * dl_iterate_phdr reports), not in a library that defines the same name. */
struct in_exe { uintptr_t addr; int first, found; };

static int in_exe_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct in_exe *q = data;
	(void)size;
	for (int i = 0; q->first && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_memsz)
			q->found = 1;
	}
	q->first = 0;
	return 1;   /* the program is always the first object */
}

static int in_program(void *addr)
{
	struct in_exe q = { (uintptr_t)addr, 1, 0 };
	dl_iterate_phdr(in_exe_cb, &q);
	return q.found;
}

/* A hook naming its library finds the symbol there, once that library is
 * loaded (RTLD_NOLOAD: never loads it); one without, in scope: RTLD_DEFAULT
 * (libraries loaded at start) or a dlopen handle (a library opened
 * RTLD_LOCAL, as ctypes and most plugin loaders do, is not in the global
 * scope: only its handle finds its symbols). */
struct loaded_match { const char *pattern; char path[4096]; };

static int loaded_match_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_match *q = data;
	(void)size;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (!*base || fnmatch(q->pattern, base, 0) != 0)
		return 0;
	snprintf(q->path, sizeof(q->path), "%s", info->dlpi_name);
	return 1;
}

/* The library a hook names, if loaded: RTLD_NOLOAD by soname, or for a
 * pattern by the path of the first loaded object that matches it (dlopen
 * takes a name, never a pattern). */
static void *loaded_library(const char *library)
{
	if (!strpbrk(library, "*?["))
		return real_dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
	struct loaded_match q = { library, "" };
	dl_iterate_phdr(loaded_match_cb, &q);
	return q.path[0] ? real_dlopen(q.path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
}

static void *find_symbol(const struct planned_hook *p, const char *symbol, void *scope)
{
	if (!p->library[0])
		return dlsym(scope, symbol);
	void *lib = loaded_library(p->library);
	if (!lib && exe_name[0] && fnmatch(p->library, exe_name, 0) == 0) {
		/* the program itself (e.g. python3.11, linked with libpython) */
		void *fn = dlsym(RTLD_DEFAULT, symbol);
		return fn && in_program(fn) ? fn : NULL;
	}
	if (!lib)
		return NULL;
	void *fn = dlsym(lib, symbol);
	dlclose(lib);   /* only drops the reference NOLOAD took */
	return fn;
}

static int already_hooked(void *fn)
{
	for (int i = 0; i < nplan; i++)
		if (plan[i].state == 1 && plan[i].hook.target == fn)
			return 1;
	return 0;
}

static void install_missing(void *scope)
{
	pthread_mutex_lock(&install_lock);
	for (int i = 0; i < nplan; i++) {
		struct planned_hook *p = &plan[i];
		if (p->state)
			continue;
		void *fn = find_symbol(p, p->symbol, scope);
		if (!fn)
			continue;
		if (p->null_obj[0]) {
			/* called here, outside any hook (thunks must not call
			 * into libraries: vector registers are live there) */
			void *(*get)(void) = (void *(*)(void))find_symbol(p, p->null_obj, scope);
			if (get)
				p->spec.null_obj = (uint64_t)get();
		}
		if (already_hooked(fn)) {   /* an alias (e.g. __pthread_mutex_lock): hooked once */
			p->state = -1;
			if (verbose)
				fprintf(stderr, "argus-agent: %s skipped: already hooked under another name\n", p->symbol);
			continue;
		}
		p->spec.fn_size = symbol_size(fn);
		int err = argus_hook_install(fn, &p->spec, &p->hook);
		p->state = err ? -1 : 1;
		if (verbose)
			fprintf(stderr, "argus-agent: %s %s%s\n", p->symbol, err ? "skipped: " : "hooked",
				err == -EBUSY ? "other threads could not be stopped for the patch"
				: err ? argus_reloc_strerror(err) : "");
	}
	pthread_mutex_unlock(&install_lock);
}

__attribute__((visibility("default"))) void *dlopen(const char *file, int mode)
{
	void *h = real_dlopen(file, mode);
	if (h && nplan)
		install_missing(h);
	return h;
}

/* For good: a dlopen after this (another thread, a destructor at exit)
 * must not patch the entries again. */
static void remove_all(void)
{
	pthread_mutex_lock(&install_lock);
	for (int i = 0; i < nplan; i++)
		if (plan[i].state == 1 && argus_hook_remove(&plan[i].hook) == 0)
			plan[i].state = 0;
	nplan = 0;
	pthread_mutex_unlock(&install_lock);
	argus_recorder_thread_done();
}

/* Tracing stopped (argusd detached the rings): the program runs on without
 * hooks, and records nothing more. */
static void remove_on_detach(void)
{
	remove_all();   /* a later dlopen installs nothing */
	if (verbose)
		fprintf(stderr, "argus-agent: tracing stopped: hooks removed\n");
}

__attribute__((constructor)) static void agent_init(void)
{
	const char *dir = getenv("ARGUS_URING_DIR"), *hooks = getenv("ARGUS_HOOKS");
	const char *v = getenv("ARGUS_AGENT_VERBOSE");
	verbose = v && *v == '1';
	real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	if (!dir || !hooks)
		return;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		const char *base = strrchr(exe, '/');
		snprintf(exe_name, sizeof(exe_name), "%.127s", base ? base + 1 : exe);
	}
	if (read_plan(hooks) || argus_recorder_init(dir, 0)) {
		if (verbose)
			fprintf(stderr, "argus-agent: cannot read %s or use %s: no hooks\n", hooks, dir);
		return;
	}
	install_missing(RTLD_DEFAULT);
	argus_recorder_on_detach(remove_on_detach);
	/* at exit, the hooks come out before libc tears down what they touch */
	atexit(remove_all);
}
