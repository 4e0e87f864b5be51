# The README's commands. `make demo` and `make test` set up a fresh Debian
# machine themselves (apt packages), then build and run.

SO      := target/release/libredislock.so
# The PHP to build for and run with: its php-config (PHP_CONFIG=... make),
# resolved where it is used: on a fresh machine php-config exists only once
# deps has installed it. ext-php-rs's build script reads PHP_CONFIG (a path)
# and PHP.
PHP_CONFIG ?= php-config
export PHP_CONFIG
CARGO_PHP = PHP_CONFIG="$$(command -v $(PHP_CONFIG))" PHP="$$($(PHP_CONFIG) --php-binary)"
# The engine tests build without the php feature: in a target dir of their
# own, so they never rebuild the extension.
ENGINE_CARGO := CARGO_TARGET_DIR=target/engine cargo
# They mostly wait on a server's clock, not the CPU: 4 test threads
# (RUST_TEST_THREADS overrides) take about half the time 2 do.
ENGINE_TESTS := RUST_TEST_THREADS=$${RUST_TEST_THREADS:-4} $(ENGINE_CARGO) test --no-default-features --lib --tests
# PHP with the fresh build, even when a copy is installed (tools/php.sh).
# `env` makes it a command, so it also runs behind another (with-redis.sh).
RUN     := env REDISLOCK_SO=$(CURDIR)/$(SO) tools/php.sh
CARGO_SOURCES := Cargo.toml build.rs $(shell find src -type f)

.PHONY: all deps test-deps build so demo test check test-rust test-php lint test-servers test-zts test-chroot faults bench check-stubs install uninstall deb dist clean

all: build

# What building needs; what the demo, the tests and the benchmarks run
# besides is installed by their own targets.
deps:
	@tools/deps.sh build

test-deps:
	@tools/deps.sh test

build: deps $(SO)

# The extension alone, without deps (make install builds with it).
so: $(SO)

$(SO): $(CARGO_SOURCES)
	$(CARGO_PHP) cargo build --release
	@touch $@

demo: build
	@tools/deps.sh demo
	tools/with-redis.sh $(RUN) php/examples/flash_sale.php

test: test-deps build test-rust test-php

# What CI checks besides the tests: the code as rustfmt writes it, and none
# of clippy's warnings.
lint: deps
	cargo fmt --check
	$(CARGO_PHP) cargo clippy --release --all-targets -- -D warnings

# The engine tests and the phpunit tests of the group `server` against the
# other servers users run (Redis 6.0 to 7.4,
# Valkey 8.0 to 9.1, Redict 7.3; tools/servers.sh fetches them):
# SERVERS="redis-6.2.5" make test-servers runs one.
test-servers: test-deps build
	tools/servers.sh

# The fault suite in its long form (longer outages, more requests); its
# fast form runs in `make test`. docs/faults.md lists what each case proves.
faults: test-deps build
	PROPTEST_CASES=20000 $(ENGINE_CARGO) test --no-default-features --test engine properties::
	FAULTS_LONG=1 GENERATED_CASES=50000 $(RUN) /usr/bin/phpunit --configuration php/tests/phpunit.xml \
	  --filter 'FaultsTest|FpmFaultsTest|PartitionTest|BadInputTest|GeneratedInputTest|testKilledWorkersLoseNothing|testLocksStillHeldAtRequestEndAreReleased|testAFatalError'

# Benchmarks against the peers and a private redis-server; writes
# bench/RESULTS.md.
bench: build
	tools/deps.sh bench
	REDISLOCK_SO=$(CURDIR)/$(SO) tools/with-redis.sh tools/bench.sh

test-rust: test-deps
	$(ENGINE_TESTS)

# PHPUNIT_ARGS narrows the suite (tools/servers.sh: --group server).
# Each skipped test prints its reason (PHPUnit 9: --verbose; 10 and later:
# --display-skipped).
test-php: test-deps build
	tools/frameworks.sh
	$(RUN) /usr/bin/phpunit --configuration php/tests/phpunit.xml \
	  $$(/usr/bin/phpunit --version | grep -q 'PHPUnit 9\.' && echo --verbose || echo --display-skipped) $(PHPUNIT_ARGS)

# What a developer runs after every change: the formatting, clippy, the
# engine tests and the phpunit tests whose outcome the server decides
# (`@group server`), against the fresh build; the engine tests beside the
# phpunit ones (both mostly wait on servers), their output in
# target/check-engine.log (shown whole when they fail). Under 3 minutes
# on 2 cores once built; `make test` runs everything.
check: test-deps build
	cargo fmt --check
	$(CARGO_PHP) cargo clippy --release --all-targets -- -D warnings
	@$(ENGINE_TESTS) > target/check-engine.log 2>&1 & engine=$$!; \
	$(RUN) /usr/bin/phpunit --configuration php/tests/phpunit.xml --group server; php=$$?; \
	wait $$engine; rust=$$?; \
	if [ $$rust -ne 0 ]; then cat target/check-engine.log; else grep '^test result' target/check-engine.log; fi; \
	[ $$php -eq 0 ] && [ $$rust -eq 0 ]

# The phpunit suite under a ZTS PHP built from Debian's php source package
# (tools/zts.sh; needs root for apt). Not in CI: building PHP takes minutes.
test-zts: test-deps
	tools/zts.sh

# The phpunit suite against another Debian release's PHP (DIST=trixie: PHP
# 8.4), in a debootstrap chroot with a target/ of its own (tools/chroot.sh;
# needs root). CI runs it after `make test`.
DIST ?= trixie
# The release profile's LTO is skipped there: it tests another PHP, not
# the speed, and `make build` pays for LTO once already.
test-chroot:
	tools/chroot.sh $(DIST) 'CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 make test-php'

# The stubs (stubs/redislock.php) against the built extension: a part of
# test-php, alone.
check-stubs: test-deps build
	$(RUN) /usr/bin/phpunit --configuration php/tests/phpunit.xml php/tests/StubsTest.php

# Production: installs only what building needs, builds as the user who
# ran sudo (with that user's cargo), copies the .so into the extension dir
# of PHP_CONFIG's PHP and enables it for its cli and fpm SAPIs.
install:
	tools/install.sh install

uninstall:
	tools/install.sh uninstall

# A Debian package for the PHP of PHP_CONFIG: target/deb/php<ver>-redislock_*.deb
deb: $(SO)
	tools/deb.sh

# The release's files in target/dist/<version>/ (tools/dist.sh): the
# source archive, PIE's pre-built zips and the .debs for this Debian's PHP
# and trixie's 8.4 (its chroot; root), ZTS=1 with the ZTS builds, and
# SHA256SUMS.
dist:
	@tools/deps.sh dist
	tools/dist.sh

clean:
	cargo clean
