# jpbpf top-level build.  Everything goes to $(O) (default build/).
#   make            build jpbpf, the agent, BPF objects and skeletons
#   make test       install missing deps, build a sanitizer variant, run tests
#   make demo       run the main job on a bundled workload
#   make bench      measured figures (bench/, docs/BENCH.md; BUDGET=minutes)
#   make install    PREFIX=/usr/local DESTDIR=
# Variables: O=dir (output), SAN=1 (ASan+UBSan), CC=gcc|clang, V=1 (verbose)

O        ?= build
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PREFIX   ?= /usr/local
JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac 2>/dev/null || echo /usr/lib/jvm/java-17-openjdk-amd64/bin/javac))))
# From git when this is a checkout (not when unpacked inside another one).
VERSION  := $(shell [ -e .git ] && git describe --always --dirty 2>/dev/null || echo 0.1.0)

ifeq ($(V),1)
Q :=
else
Q := @
endif

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CFLAGS   ?= -O2 -g
BASEFLAGS := -std=c11 -D_GNU_SOURCE -fPIC -MMD -MP $(WARN) -Iuser -Iuser/bundle -Iuser/bundle/records -I$(O)
ifeq ($(SAN),1)
BASEFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDSAN     := -fsanitize=address,undefined
endif
ALL_CFLAGS := $(BASEFLAGS) $(CFLAGS)
LIBS     := -lbpf -lelf -ldw -lipt -lcapstone -ljansson -lz -ldeflate -lpthread -lm

# ---- sources -----------------------------------------------------------
BUNDLE_SRCS := $(sort $(shell find user/bundle -name '*.c'))
USER_SRCS   := $(sort $(filter-out user/bundle/% user/cli/main.c,$(shell find user -name '*.c')))
MAIN_SRC    := user/cli/main.c
AGENT_SRCS  := $(sort $(wildcard agent/*.c))
SIM_SRCS    := $(sort $(wildcard tests/sim/*.c))
UNIT_SRCS   := $(sort $(shell find tests/unit -name 'test_*.c'))
TOOL_SRCS   := $(sort $(filter-out %_agent.c,$(wildcard tests/tools/*.c)))
TOOL_AGENT_SRCS := $(sort $(wildcard tests/tools/*_agent.c))
BPF_SRCS    := $(sort $(wildcard bpf/*.bpf.c))

obj = $(patsubst %.c,$(O)/obj/%.o,$(1))
BUNDLE_OBJS := $(call obj,$(BUNDLE_SRCS))
USER_OBJS   := $(call obj,$(USER_SRCS))
AGENT_OBJS  := $(call obj,$(AGENT_SRCS))
SIM_OBJS    := $(call obj,$(SIM_SRCS))
BPF_OBJS    := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS       := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.skel.h,$(BPF_SRCS))
UNIT_BINS   := $(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(UNIT_SRCS))
TOOL_BINS   := $(patsubst tests/tools/%.c,$(O)/tests/tools/%,$(TOOL_SRCS))
TOOL_AGENTS := $(patsubst tests/tools/%.c,$(O)/tests/tools/%.so,$(TOOL_AGENT_SRCS))

BIN_JPBPF := $(O)/jpbpf
LIB_AGENT := $(O)/libjpbpf-agent.so
BIN_SIM   := $(if $(SIM_SRCS),$(O)/jpbpf-sim)
LIB_BUNDLE := $(O)/libjpbpf-bundle.a
LIB_USER   := $(O)/libjpbpf.a

.PHONY: all test unit-tests demo bench install clean deps deps-programs workloads check-clang FORCE
all: $(BIN_JPBPF) $(if $(AGENT_SRCS),$(LIB_AGENT)) $(BIN_SIM) $(BPF_OBJS) $(SKELS)

# ---- C objects ------------------------------------------------------------
# The version the binaries report (meta.json's tool_version, --version):
# checked on every make, rewritten only when it changed, so the files that
# include it are rebuilt (their .d files name it) when HEAD moves and an
# unchanged tree rebuilds nothing.
VERSION_H := $(O)/jpbpf_version.h
$(VERSION_H): FORCE
	@mkdir -p $(@D)
	$(Q)printf '#define JPBPF_VERSION "%s"\n' '$(VERSION)' >$@.tmp && \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; \
	else mv $@.tmp $@ && echo "  GEN     $@"; fi
FORCE:

$(O)/obj/%.o: %.c | $(SKELS) $(VERSION_H)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(O)/obj/agent/%.o: ALL_CFLAGS += -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux -fvisibility=hidden

$(LIB_BUNDLE): $(BUNDLE_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIB_USER): $(USER_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN_JPBPF): $(call obj,$(MAIN_SRC)) $(LIB_USER) $(LIB_BUNDLE)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDSAN) -o $@ $^ $(LIBS)

# The agent checks class files with the program model's parser.
$(LIB_AGENT): $(AGENT_OBJS) $(call obj,user/java/classfile.c) $(LIB_BUNDLE)
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(LDSAN) -Wl,--no-undefined -o $@ $^ -ljansson -lz -ldeflate -lelf -ldw -lpthread -ldl

$(O)/jpbpf-sim: $(SIM_OBJS) $(LIB_USER) $(LIB_BUNDLE)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDSAN) -o $@ $^ $(LIBS)

# ---- BPF --------------------------------------------------------------------
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
# With -target bpf, clang does not search the host's multiarch directory
# (Debian keeps asm/errno.h, which libbpf's usdt.bpf.h needs, there); give
# it the host's system include dirs, as libbpf-tools does.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux/vmlinux.h
	@mkdir -p $(@D)
	@echo "  BPF     $<"
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
		-Ivmlinux -Ibpf $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# ---- tests ------------------------------------------------------------------
# Unit tests live in tests/unit/<component>/; they include project files by
# their path from the top (-I.), e.g. "tests/sim/ptenc.c", "bpf/jpbpf.h".
$(O)/tests/unit/%: tests/unit/%.c $(LIB_USER) $(LIB_BUNDLE)
	@mkdir -p $(@D)
	@echo "  TEST    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -I. $(LDSAN) -o $@ $< $(LIB_USER) $(LIB_BUNDLE) $(LIBS) -lcmocka

# Test tools: checkers the integration suites run on bundles.
$(O)/tests/tools/%: tests/tools/%.c $(LIB_USER) $(LIB_BUNDLE)
	@mkdir -p $(@D)
	@echo "  TOOL    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -I. $(LDSAN) -o $@ $< $(LIB_USER) $(LIB_BUNDLE) $(LIBS) -lcmocka

# Test agents (tests/tools/*_agent.c, e.g. the bench's null agent): JVMTI
# libraries, built without the sanitizers in every build, since ASan's
# runtime cannot be preloaded into a JVM sanely.
$(O)/tests/tools/%_agent.so: tests/tools/%_agent.c
	@mkdir -p $(@D)
	@echo "  AGENT   $@"
	$(Q)$(CC) $(filter-out -fsanitize=%,$(ALL_CFLAGS)) -isystem $(JAVA_HOME)/include \
		-isystem $(JAVA_HOME)/include/linux -fvisibility=hidden -shared -Wl,--no-undefined -o $@ $<

unit-tests: $(UNIT_BINS) $(TOOL_BINS) $(TOOL_AGENTS) $(BIN_JPBPF) $(BIN_SIM)

workloads:
	$(Q)tests/workloads/build $(O)/workloads

deps:
	$(Q)scripts/install-deps

# The tests and the bench also drive real Java programs from Debian.
deps-programs:
	$(Q)scripts/install-deps --programs

# The sanitizer variant runs the tests; the plain build serves the agent
# (it is loaded into a JVM, where ASan's runtime cannot be preloaded sanely)
# and the BPF objects.  The clang build is a warnings gate.
test: deps-programs
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory O=$(O)/asan SAN=1 unit-tests
	$(Q)$(MAKE) --no-print-directory check-clang
	$(Q)tests/run --build $(O) --san-build $(O)/asan

check-clang:
	$(Q)$(MAKE) --no-print-directory O=$(O)/clang CC=$(CLANG) all $(if $(UNIT_SRCS),unit-tests)

demo: deps all
	$(Q)scripts/demo $(O)

bench: deps-programs all
	$(Q)bench/run $(if $(BUDGET),--budget $(BUDGET)) $(O)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/jpbpf $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN_JPBPF) $(DESTDIR)$(PREFIX)/bin/jpbpf
	$(if $(AGENT_SRCS),install -m 0755 $(LIB_AGENT) $(DESTDIR)$(PREFIX)/lib/jpbpf/)
	$(if $(BIN_SIM),install -m 0755 $(BIN_SIM) $(DESTDIR)$(PREFIX)/bin/jpbpf-sim)
	install -m 0644 docs/jpbpf.1 $(DESTDIR)$(PREFIX)/share/man/man1/jpbpf.1

clean:
	rm -rf $(O)

-include $(shell find $(O)/obj $(O)/tests -name '*.d' 2>/dev/null)
