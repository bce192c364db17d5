# Trillian: build, test and install. `make` builds ./trillian; `make check`
# runs every fast test under ASan/UBSan; `make image` builds the default image.
VERSION    := 0.1.0
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
DATADIR    ?= $(PREFIX)/share/trillian
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR    ?=

PKGS       := libconfig libarchive libparted libcrypto json-c zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CC         ?= cc
CFLAGS     ?= -O2 -g
WARN       := -std=c17 -Wall -Wextra -Werror
DEFS       := -DTRILLIAN_VERSION=\"$(VERSION)\" -DTRILLIAN_DATADIR=\"$(DATADIR)\"
ALL_CFLAGS := $(WARN) $(DEFS) -Ibuilder $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
SAN        := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# The commit the binary is built from, for --version: only when this
# directory is the top of a git checkout (not a tarball unpacked inside some
# other repository), "-dirty" with uncommitted changes, else "unknown". Only
# main.o gets it, rebuilt when it changes (build/commit holds the last one).
GIT_COMMIT := $(shell [ "$$(git -C "$(CURDIR)" rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
                git -C "$(CURDIR)" rev-parse --short HEAD 2>/dev/null | tr -d '\n' && \
                { git -C "$(CURDIR)" diff --quiet HEAD -- 2>/dev/null || printf -- -dirty; } || echo unknown)
ifeq ($(GIT_COMMIT),)
GIT_COMMIT := unknown
endif
$(shell mkdir -p build; [ "$$(cat build/commit 2>/dev/null)" = "$(GIT_COMMIT)" ] || echo "$(GIT_COMMIT)" > build/commit)
build/builder/main.o build-san/builder/main.o: build/commit
build/builder/main.o build-san/builder/main.o: COMMIT_DEF := -DTRILLIAN_COMMIT=\"$(GIT_COMMIT)\"

SRC        := $(sort $(wildcard builder/*.c builder/*/*.c))
OBJ        := $(SRC:%.c=build/%.o)
SAN_OBJ    := $(SRC:%.c=build-san/%.o)
LIB_SAN    := $(filter-out build-san/builder/main.o,$(SAN_OBJ))
UNIT_SRC   := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=build-san/tests/%)

.PHONY: all check check-slow check-all unit deps deps-image image install clean bench

all: trillian

trillian: $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

build/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(COMMIT_DEF) -c -o $@ $<

build-san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(COMMIT_DEF) -O1 $(SAN) -c -o $@ $<

build-san/trillian: $(SAN_OBJ)
	$(CC) $(SAN) -o $@ $^ $(PKG_LIBS)

build-san/tests/%: tests/unit/%.c $(LIB_SAN)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O1 $(SAN) -Ibuilder -o $@ $< $(LIB_SAN) $(PKG_LIBS) -lcmocka

unit: $(UNIT_BIN)

# The test targets compile in a sub-make on every core (unless make was
# given -j): not by a -j of the whole run, which would start `make deps
# check`'s compiles before deps has installed the libraries.
NPROC := $(shell nproc 2>/dev/null || echo 1)
TEST_BUILD = $(MAKE) $(if $(findstring -j,$(MAKEFLAGS)),,-j$(NPROC)) trillian build-san/trillian \
	$(UNIT_BIN)

# The fast tier: unit tests and integration tests, all under ASan/UBSan.
check:
	$(TEST_BUILD)
	tests/run --tier fast --trillian build-san/trillian $(UNIT_BIN)

# The slow tier adds real toolchain, kernel and userland builds.
check-slow:
	$(TEST_BUILD)
	tests/run --tier slow --trillian ./trillian

check-all:
	$(TEST_BUILD)
	tests/run --tier all --trillian build-san/trillian $(UNIT_BIN)

# Debian packages by purpose (tools/install-deps): the tests need them all,
# the default image only its build's.
deps:
	tools/install-deps tests

deps-image:
	tools/install-deps image

# Installs what is needed, then builds the default recipe. The mirror beside
# the checkout (../shared/mirror), where there is one, serves the downloads
# that live outside Debian's archive (the ia64 patches, emulator sources).
MIRROR_OPT := $(if $(wildcard ../shared/mirror/SHA256SUMS),--mirror ../shared/mirror)
image: deps-image
	$(MAKE) trillian
	./trillian build $(MIRROR_OPT)

bench: trillian
	bench/run

# Staged and renamed into place; a destination that cannot be written fails
# before anything is copied (tools/install-files).
install: trillian
	tools/install-files "$(DESTDIR)$(BINDIR)/trillian" "$(DESTDIR)$(DATADIR)" \
		"$(DESTDIR)$(MANDIR)" "$(DESTDIR)$(BASHCOMPDIR)"

clean:
	rm -rf build build-san trillian

-include $(OBJ:.o=.d) $(SAN_OBJ:.o=.d)
