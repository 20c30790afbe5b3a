# heapprof - one Makefile, objects under build/.
#
#   make            build bin (build/heapprof), the recorder (build/libheapprof.so),
#                   the man pages and completions (build/doc/, from the binary's --help)
#   make check      run every test (alias: make test); SAN=address,undefined for sanitizers;
#                   SAN=thread runs the recorder's unit tests (its lock-free tables,
#                   many threads at once) under ThreadSanitizer, in build-tsan/
#   make bench      benchmarks: bare vs heapprof vs heaptrack, one table
#   make demo       profile examples/example.c and inspect the capture
#   make install    PREFIX=/usr/local (bin/, lib/heapprof/, include/, share/man/man1/,
#                   bash and zsh completions); DESTDIR for staging
#   make deb        build/heapprof_VERSION_ARCH.deb, with dpkg-deb
#   make format     clang-format every source file
#   make deps       install build and test dependencies (as root), or say which
#
# make, make install, make demo and make deb need only the build dependencies
# (scripts/deps.sh build); make check, make fuzz and make bench also their
# tools (Go, Chromium, clang, ...).
#
# Knobs: DEBUG=1 (no optimisation, the recorder included: into build-debug/),
# SAN=address,undefined (into build-san/; SAN=thread into build-tsan/), PREFIX.

PREFIX ?= /usr/local
BUILD ?= build$(if $(SAN),$(if $(findstring thread,$(SAN)),-tsan,-san),)$(if $(DEBUG),-debug,)
# One spelling of the build folder, relative to here when it is inside:
# objects are named through it, and so are the targets of the dependency
# files the compiler writes. Named once as /abs/build (scripts/deb.sh's
# make install) and once as build, an object's dependencies were lost, and
# a header's change left it stale.
override BUILD := $(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))
CC ?= cc
DEBUG ?=
SAN ?=

PKGS := libunwind libzstd zlib libdw libelf
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

OPT := $(if $(DEBUG),-O0,-O2)
WERROR := $(if $(CI),-Werror,)
SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-sanitize-recover=all,)
CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra $(WERROR) $(OPT) -g $(PKG_CFLAGS) \
	-MMD -MP $(EXTRA_CFLAGS)

# The recorder runs inside other programs: position-independent, hidden by
# default, frame pointers of its own, interposers included (the fp walk
# needs them: a frameless malloc would hide its caller from the walk),
# initial-exec TLS (no allocation on a thread's first touch), and no
# builtin knowledge of malloc in the interposer. Never sanitized: it is the
# allocator the sanitizers would sit on. DEBUG=1 builds it with -O0 too
# (RECORDER_OPT), into its own $(BUILD).
RECORDER_OPT := $(if $(DEBUG),-O0,-O2)
RECORDER_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra $(WERROR) $(RECORDER_OPT) -g $(PKG_CFLAGS) \
	-fPIC -fvisibility=hidden -fno-omit-frame-pointer -ftls-model=initial-exec \
	-fno-builtin -fexceptions -MMD -MP $(EXTRA_CFLAGS)
RECORDER_LIBS := -lunwind -lzstd -lz -lm -ldl -lpthread

COMMON_SRC := $(wildcard src/common/*.c)
FORMAT_SRC := $(wildcard src/format/*.c)
RECORDER_SRC := $(wildcard src/recorder/*.c)
ANALYZER_SRC := $(wildcard src/analyzer/*.c src/analyzer/*/*.c)
ATTACH_SRC := $(wildcard src/attach/*.c)
LIVE_SRC := $(wildcard src/live/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
# Page assets (the flame graph's and the HTML report's JavaScript and CSS,
# and the vendored libraries under assets/vendor/ with their licences),
# embedded at build time: scripts/embed.sh writes their bytes into
# $(BUILD)/gen/assets.c (src/analyzer/assets/assets.h declares them).
# The HTML report's script is the files of assets/report/, one per view
# around a core, in this order (core.js defines what the others use,
# main.js starts the page), joined into $(BUILD)/gen/report.js in one
# function scope, embedded as report.js.
REPORT_JS := $(addprefix src/analyzer/assets/report/,core.js overview.js timeline.js grew.js \
	flame.js tables.js histograms.js memmap.js main.js)
REPORT_JS_OUT := $(BUILD)/gen/report.js
ASSETS := $(sort $(wildcard src/analyzer/assets/*.js src/analyzer/assets/*.css \
	src/analyzer/assets/vendor/*.js src/analyzer/assets/vendor/*.css \
	src/analyzer/assets/vendor/*.LICENSE) $(REPORT_JS_OUT))
ASSET_C := $(BUILD)/gen/assets.c
ASSET_OBJ := $(BUILD)/host/gen/assets.o

obj = $(patsubst %.c,$(BUILD)/$(1)/%.o,$(2))

# The analyzer's toolkit in src/common (hash tables, strings, growable
# arrays, units, text escaping, messages, inputs opened without blocking:
# table, strtab, vec, units, text, say, infile) allocates with malloc and
# formats with stdio, or calls libc the recorder reaches only through os.c:
# never linked into it.
COMMON_HEAP_SRC := $(addprefix src/common/,table.c strtab.c vec.c units.c text.c say.c infile.c)

# The recorder writes captures and never reads them: the encoder only.
# cfa_cache.c, aggregate.c, live.c, recorder.c and interpose.c are compiled
# as one unit, record_path.c (it says why), in the recorder's libraries; the
# unit tests compile the first three alone.
RECORDER_UNIT_SRC := src/recorder/cfa_cache.c src/recorder/aggregate.c src/recorder/live.c \
	src/recorder/recorder.c src/recorder/interpose.c
RECORDER_LIB_SRC := $(filter-out $(RECORDER_UNIT_SRC),$(RECORDER_SRC))
RECORDER_OBJ := $(call obj,pic,$(RECORDER_LIB_SRC) src/format/encode.c \
	$(filter-out $(COMMON_HEAP_SRC),$(COMMON_SRC)))
CORE_OBJ := $(call obj,host,$(ANALYZER_SRC) $(FORMAT_SRC) $(COMMON_SRC)) $(ASSET_OBJ)
CLI_OBJ := $(call obj,host,$(CLI_SRC) $(ATTACH_SRC) $(LIVE_SRC))

# The recorder's core (its tables, the writer, the options, os.c) built
# again for the host test binaries (tests/unit/test_rec_*.c), sanitizers
# included, with HP_OS_MUTABLE: every os.h function is called through a
# pointer a test can swap (os.h). Not the interposers, nor what needs them
# (recorder.c, trigger.c, unwind.c, got.c, api.c).
RECTEST_SRC := $(filter-out src/recorder/interpose% src/recorder/api.c src/recorder/recorder.c \
	src/recorder/record_path.c src/recorder/trigger.c src/recorder/unwind.c src/recorder/got.c,\
	$(RECORDER_SRC))
RECTEST_OBJ := $(call obj,rtest,$(RECTEST_SRC))
RECTEST := $(BUILD)/librectest.a

# The static recorder (libheapprof.a) for programs linked with -static: the
# recorder's objects built again with -DHP_STATIC (entry points __wrap_X,
# real functions __real_X: see interpose_inline.h), without what needs a
# loader (attach.c, got.c). Their text sections are renamed into one,
# heapprof_text, whose bounds the linker defines (__start_/__stop_), so that
# the unwinder knows the recorder's own frames inside a one-segment program.
# heapprof-static.pc says how to link with it: the --wrap list and the
# dependencies' static archives (libunwind.a needs liblzma.a).
STATIC_SRC := $(filter-out src/recorder/attach.c src/recorder/got.c,$(RECORDER_LIB_SRC)) \
	src/format/encode.c $(filter-out $(COMMON_HEAP_SRC),$(COMMON_SRC))
STATIC_OBJ := $(call obj,static,$(STATIC_SRC))
STATIC_LIB := $(BUILD)/libheapprof.a
STATIC_TEXT := .text .text.unlikely .text.hot .text.startup .text.exit
STATIC_WRAP := malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign \
	valloc pvalloc _exit _Exit execve execv execvp execvpe fexecve execveat execl execlp execle \
	sigaction signal mmap mmap64 munmap mremap brk sbrk \
	_Znwm _Znam _ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t _ZnwmSt11align_val_t _ZnamSt11align_val_t \
	_ZnwmSt11align_val_tRKSt9nothrow_t _ZnamSt11align_val_tRKSt9nothrow_t \
	_ZdlPv _ZdaPv _ZdlPvm _ZdaPvm _ZdlPvRKSt9nothrow_t _ZdaPvRKSt9nothrow_t \
	_ZdlPvSt11align_val_t _ZdaPvSt11align_val_t _ZdlPvmSt11align_val_t _ZdaPvmSt11align_val_t \
	_ZdlPvSt11align_val_tRKSt9nothrow_t _ZdaPvSt11align_val_tRKSt9nothrow_t
STATIC_PC := $(BUILD)/pkgconfig/heapprof-static.pc
STATIC_PC_IN := src/recorder/heapprof-static.pc.in
comma := ,
empty :=
space := $(empty) $(empty)

LIB := $(BUILD)/libheapprof.so
BIN := $(BUILD)/heapprof
CORE := $(BUILD)/libhpcore.a

DOC := $(BUILD)/doc

.PHONY: all binaries docs check test bench demo install deb format clean deps deps-build

# Every entry point first makes sure the dependencies it needs are installed
# (as root) or says which are missing, then builds in a fresh make, so that
# pkg-config sees what was just installed.
all: deps-build
	@$(MAKE) --no-print-directory binaries docs

binaries: $(LIB) $(BIN) $(STATIC_LIB) $(STATIC_PC)

# The man pages and completions say what the built binary's --help says
# (scripts/gendocs.sh); one stamp for the lot, as their names come from it.
docs: $(DOC)/stamp

$(DOC)/stamp: $(BIN) scripts/gendocs.sh scripts/helpdoc.awk
	sh scripts/gendocs.sh $(BIN) $(DOC)
	@touch $@

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(RECORDER_CFLAGS) -c $< -o $@


$(BUILD)/static/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(RECORDER_CFLAGS) -DHP_STATIC -MF $(@:.o=.d) -MT $@ -c $< -o $@.tmp
	objcopy $(foreach s,$(STATIC_TEXT),--rename-section $(s)=heapprof_text) $@.tmp $@
	@rm -f $@.tmp

$(STATIC_LIB): $(STATIC_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The .pc file for a prefix: $(call static_pc,PREFIX,LIBDIR,OUT).
static_pc = sed -e 's|@PREFIX@|$(1)|' -e 's|@LIBDIR@|$(2)|' \
	-e 's|@VERSION@|$(shell sed -n 's/.*HP_VERSION "\(.*\)".*/\1/p' src/common/version.h)|' \
	-e 's|@WRAP@|-Wl,--wrap=$(subst $(space),$(comma)--wrap=,$(strip $(STATIC_WRAP)))|' \
	$(STATIC_PC_IN) > $(3)

# The build tree's own, for the tests (PKG_CONFIG_PATH=$(BUILD)/pkgconfig).
$(STATIC_PC): $(STATIC_PC_IN) Makefile src/common/version.h
	@mkdir -p $(dir $@)
	$(call static_pc,$(abspath $(BUILD)),$${prefix},$@)

$(BUILD)/host/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@

$(BUILD)/rtest/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -DHP_OS_MUTABLE -fno-omit-frame-pointer -c $< -o $@

$(RECTEST): $(RECTEST_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(REPORT_JS_OUT): $(REPORT_JS) scripts/join.sh
	@mkdir -p $(dir $@)
	sh scripts/join.sh $@ $(REPORT_JS)

$(ASSET_C): $(ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh $@ $(ASSETS)

$(ASSET_OBJ): $(ASSET_C)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@

$(LIB): $(RECORDER_OBJ) src/recorder/libheapprof.map Makefile
	$(CC) -shared -o $@ $(RECORDER_OBJ) -Wl,--version-script=src/recorder/libheapprof.map \
		-Wl,-z,now -Wl,-z,nodelete $(RECORDER_LIBS)

$(CORE): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(CORE)
	$(CC) $(SANFLAGS) -o $@ $(CLI_OBJ) $(CORE) -ldw -lelf -liberty -lzstd -lz -lm -lstdc++

# Under ThreadSanitizer only the recorder's unit tests: the rest runs
# programs under the (never sanitized) recorder, where TSan has nothing of
# ours to watch.
check test: deps
ifeq ($(findstring thread,$(SAN)),)
	@$(MAKE) --no-print-directory tests docs
	@bash tests/run.sh $(BUILD)
else
	@$(MAKE) --no-print-directory $(REC_TEST_BINS)
	@bash tests/run.sh $(BUILD) 'unit/test_rec_*'
endif

bench:
	@bash scripts/deps.sh bench
	@$(MAKE) --no-print-directory binaries
	@bash bench/macro/run.sh $(BUILD)
	@bash bench/macro/ipp.sh $(BUILD)
	@bash bench/macro/events.sh $(BUILD)
	@bash bench/macro/threads.sh $(BUILD)
	@bash bench/analyzer/run.sh $(BUILD)

demo: deps-build
	@$(MAKE) --no-print-directory binaries
	@bash examples/demo.sh $(BUILD)

deps:
	@bash scripts/deps.sh test

deps-build:
	@bash scripts/deps.sh build

# zsh looks in share/zsh/vendor-completions for what the system's packages
# install (Debian's fpath), in share/zsh/site-functions for the rest.
ZSH_DIR := share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/heapprof $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/$(ZSH_DIR)
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/heapprof
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/heapprof/libheapprof.so
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/heapprof/libheapprof.a
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	$(call static_pc,$(PREFIX),$${prefix}/lib/heapprof,$(DESTDIR)$(PREFIX)/lib/pkgconfig/heapprof-static.pc)
	install -m 644 include/heapprof.h include/heapprof.hpp $(DESTDIR)$(PREFIX)/include/
	install -d $(DESTDIR)$(PREFIX)/include/heapprof
	install -m 644 include/heapprof/*.hpp $(DESTDIR)$(PREFIX)/include/heapprof/
	install -m 644 $(DOC)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(DOC)/completion/heapprof \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/heapprof
	install -m 644 $(DOC)/completion/_heapprof $(DESTDIR)$(PREFIX)/$(ZSH_DIR)/_heapprof

# A Debian package of this tree (scripts/deb.sh): make install PREFIX=/usr
# into a staging root, then dpkg-deb.
deb: all
	@bash scripts/deb.sh $(BUILD)

format:
	clang-format -i $$(find src include tests bench examples -name '*.[ch]' -o -name '*.cpp')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)

# --- tests ---------------------------------------------------------------
# Test programs keep every frame: noinline in the source, no sibling calls,
# frame pointers for --unwind=fp.
TEST_PROG_CFLAGS := -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread
TEST_PROGS := $(patsubst tests/programs/%.c,$(BUILD)/tests/programs/%,$(wildcard tests/programs/*.c)) \
	$(patsubst tests/programs/%.cpp,$(BUILD)/tests/programs/%,$(wildcard tests/programs/*.cpp))
# cxx_stl_static: cxx_stl with libstdc++ linked in and no symbols, as
# Debian's cc1 and cc1plus are (built by its own rule below).
TEST_PROGS += $(BUILD)/tests/programs/cxx_stl_static
TEST_LIBS := $(patsubst tests/programs/%.c,$(BUILD)/tests/programs/%.so,$(wildcard tests/programs/lib*.c))
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*.c tests/integration/*.c tests/fault/*.c))
REC_TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_rec_*.c))
HARNESS_OBJ := $(call obj,host,$(wildcard tests/harness/*.c))

$(BUILD)/tests/programs/lib%.so: tests/programs/lib%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_PROG_CFLAGS) -shared -fPIC -o $@ $<

# dtorfree is linked with libdtorfree.so (a DT_NEEDED library, initialised
# before the recorder and so finalised after it).
$(BUILD)/tests/programs/dtorfree: tests/programs/dtorfree.c $(BUILD)/tests/programs/libdtorfree.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests/programs -ldtorfree \
		-Wl,-rpath,'$$ORIGIN'

# exitlist is linked with libexitlist.so (whose constructor registers
# exit functions before main).
$(BUILD)/tests/programs/exitlist: tests/programs/exitlist.c $(BUILD)/tests/programs/libexitlist.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests/programs -Wl,--no-as-needed -lexitlist \
		-Wl,-rpath,'$$ORIGIN'

# libstripped.so is shipped stripped (.dynsym only), stripuser linked
# with it: frames of a library without symbols.
$(BUILD)/tests/programs/libstripped.so: tests/programs/libstripped.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_PROG_CFLAGS) -shared -fPIC -o $@ $<
	strip --strip-all $@

$(BUILD)/tests/programs/stripuser: tests/programs/stripuser.c $(BUILD)/tests/programs/libstripped.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests/programs -lstripped \
		-Wl,-rpath,'$$ORIGIN'

# nonpie is built without PIE: a canonical PLT entry for malloc, as in
# Debian's python3 and node.
$(BUILD)/tests/programs/nonpie: tests/programs/nonpie.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_PROG_CFLAGS) -fno-pie -no-pie -o $@ $<

# analyzerstacks is the analyzer benchmark's program, built as the
# benchmark builds it (bench/analyzer/run.sh: -O2 -g, 13 to 23 frames a
# stack): its capture is the one issue 25's goals are measured on.
$(BUILD)/tests/programs/analyzerstacks: tests/programs/analyzerstacks.c bench/analyzer/manystacks.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -o $@ $<

$(BUILD)/tests/programs/cxx_stl_static: tests/programs/cxx_stl.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_PROG_CFLAGS) -std=c++17 -fsized-deallocation -static-libstdc++ -s -o $@ $< -ldl

$(BUILD)/tests/programs/%: tests/programs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_PROG_CFLAGS) -o $@ $< -ldl -lm

$(BUILD)/tests/programs/%: tests/programs/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_PROG_CFLAGS) -std=c++17 -fsized-deallocation -o $@ $< -ldl

$(BUILD)/tests/%: tests/%.c $(HARNESS_OBJ) $(CORE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $< $(HARNESS_OBJ) $(CORE) -lelf -ldw -liberty -lzstd -lz -lm -lstdc++

# The seccomp filter runner of attach (src/attach/seccomp.c), alone.
$(BUILD)/tests/unit/test_seccomp: tests/unit/test_seccomp.c $(call obj,host,src/attach/seccomp.c) $(HARNESS_OBJ) $(CORE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $< $(call obj,host,src/attach/seccomp.c) $(HARNESS_OBJ) $(CORE) \
		-lelf -ldw -liberty -lzstd -lz -lm -lstdc++

# The recorder's unit tests: its core through the os.c seam, and the
# analyzer's reader (in CORE) to read back what the writer wrote.
$(BUILD)/tests/unit/test_rec_%: tests/unit/test_rec_%.c tests/unit/rec_seam.h $(HARNESS_OBJ) $(RECTEST) $(CORE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -DHP_OS_MUTABLE -o $@ $< $(HARNESS_OBJ) $(RECTEST) $(CORE) \
		-lelf -ldw -lzstd -lz -lm -lpthread -ldl -lstdc++


# The Rust test program, built twice by Debian's rustc (scripts/deps.sh
# installs it; a missing rustc fails the build of the tests): the legacy
# symbol mangling (rustc's default) and v0. Unoptimised: every allocation
# stays in its function.
RUSTC ?= $(firstword $(wildcard /usr/bin/rustc) rustc)
RUST_FLAGS := --edition 2021 --crate-name known -C opt-level=0 -g -C force-frame-pointers=yes
RUST_PROGS := $(BUILD)/tests/programs/rust_legacy $(BUILD)/tests/programs/rust_v0

$(BUILD)/tests/programs/rust_legacy: tests/programs/rust_known.rs
	@mkdir -p $(dir $@)
	$(RUSTC) $(RUST_FLAGS) -o $@ $<

$(BUILD)/tests/programs/rust_v0: tests/programs/rust_known.rs
	@mkdir -p $(dir $@)
	$(RUSTC) $(RUST_FLAGS) -C symbol-mangling-version=v0 -o $@ $<

# The capture generator of the analyzer benchmark, for tests that need a
# capture of many stacks: built with the tests' flags (sanitizers too).
$(BUILD)/tests/gen_stacks: bench/analyzer/gen_stacks.c $(CORE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -I. -o $@ $< $(CORE) -lelf -ldw -lzstd -lz -lm -lstdc++

tests: binaries $(filter-out $(BUILD)/tests/programs/lib%,$(TEST_PROGS)) $(TEST_LIBS) $(TEST_BINS) \
	$(RUST_PROGS) $(BUILD)/tests/gen_stacks
.PHONY: tests

# --- fuzzing ---
# make fuzz: the capture reader (src/format/capture.c) and every view of
# what it loads (the analyzer: report, html, diff, the exports, the flame
# graph; tests/fuzz/views.h) under libFuzzer with ASan and UBSan, for
# FUZZ_SECONDS (default 60) in one process, over a scratch corpus in
# $(BUILD)/fuzz/corpus seeded with crafted and real captures
# (tests/fuzz/run.sh). A crash input is copied to tests/fuzz/crashes/ and
# the target fails; tests/fault/test_fuzz_corpus replays that directory in
# `make check`, and runs `make fuzz` there when CI or HP_FUZZ=1 is set. See
# tests/fuzz/README.md.
#
# Built with clang from the sources, not from the gcc-built archive: the
# fuzzer needs its coverage instrumentation in the code under test. No
# -Werror here even in CI: a second compiler's warnings about other people's
# files are not a reason to stop fuzzing.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ := $(BUILD)/fuzz
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g -fno-omit-frame-pointer $(PKG_CFLAGS)
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SRC := $(ANALYZER_SRC) $(FORMAT_SRC) $(COMMON_SRC) $(ASSET_C)
FUZZ_LIBS := -lelf -ldw -liberty -lzstd -lz -lm
FUZZ_HDR := $(wildcard src/format/*.h src/common/*.h src/analyzer/*.h src/analyzer/*/*.h \
	tests/fuzz/*.h)
FUZZ_PROGS := $(addprefix $(BUILD)/tests/programs/,known dlopener libplugin.so threads triggers)

# The probe links an empty target first, so that a missing libFuzzer says
# what to install instead of failing in the linker.
$(FUZZ)/fuzz_capture: tests/fuzz/fuzz_capture.c $(FUZZ_SRC) $(FUZZ_HDR) Makefile
	@mkdir -p $(dir $@)
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return !d && n; }\n' | \
		$(FUZZ_CC) $(FUZZ_SAN) -x c - -o $@.probe >/dev/null 2>&1 || { \
		echo "heapprof: make fuzz needs clang with libFuzzer and the sanitizers:" \
			"apt-get install clang libclang-rt-14-dev" >&2; exit 1; }
	@rm -f $@.probe
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ tests/fuzz/fuzz_capture.c $(FUZZ_SRC) $(FUZZ_LIBS)

$(FUZZ)/gen_seeds: tests/fuzz/gen_seeds.c src/format/encode.c src/format/buf_heap.c $(FUZZ_HDR) Makefile | $(FUZZ)/fuzz_capture
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz/gen_seeds.c src/format/encode.c src/format/buf_heap.c -lzstd -lz

fuzz: deps-fuzz
	@$(MAKE) --no-print-directory $(FUZZ)/fuzz_capture $(FUZZ)/gen_seeds binaries $(FUZZ_PROGS)
	@bash tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS)

# make fuzz-core: the core reader (src/analyzer/core/, and what it
# calls: the whole analyzer) under libFuzzer, for FUZZ_SECONDS, seeded with
# real cores of test programs with and without heapprof
# (tests/fuzz/run_core.sh). Crash inputs go to tests/fuzz/crashes-core/.
FUZZ_CORE_PROGS := $(addprefix $(BUILD)/tests/programs/,corereach coreheap overflow)

$(FUZZ)/fuzz_core: tests/fuzz/fuzz_core.c $(FUZZ_SRC) $(FUZZ_HDR) Makefile
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ tests/fuzz/fuzz_core.c $(FUZZ_SRC) $(FUZZ_LIBS)

fuzz-core: deps-fuzz
	@$(MAKE) --no-print-directory $(FUZZ)/fuzz_capture $(FUZZ)/fuzz_core binaries \
		$(FUZZ_CORE_PROGS)
	@bash tests/fuzz/run_core.sh $(BUILD) $(FUZZ_SECONDS)
.PHONY: fuzz-core

deps-fuzz:
	@bash scripts/deps.sh fuzz
.PHONY: deps-fuzz
.PHONY: fuzz
