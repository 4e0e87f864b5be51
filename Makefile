# The README's commands. `make demo` and `make test` set up a fresh Debian
# machine themselves (apt packages, cargo-php), then build and run.

SO      := target/release/libredislock.so
# cargo-php reads the stubs from the describe table ext-php-rs compiles only
# into debug builds, so stubs come from a debug build of the same sources.
DEBUG_SO := target/debug/libredislock.so
# The engine tests build without the php feature: in a target dir of their
# own, so they never overwrite the extension the stubs are read from.
ENGINE_CARGO := CARGO_TARGET_DIR=target/engine cargo
PHP     := php -d extension=$(CURDIR)/$(SO)
CARGO_SOURCES := Cargo.toml build.rs $(shell find src -type f)

.PHONY: all deps build demo test test-rust test-php faults bench stubs check-stubs install clean

all: build

deps:
	@tools/deps.sh

build: deps $(SO)

$(SO): $(CARGO_SOURCES)
	cargo build --release
	@touch $@

$(DEBUG_SO): $(CARGO_SOURCES)
	cargo build
	@touch $@

demo: build
	tools/with-redis.sh $(PHP) php/examples/flash_sale.php

test: build test-rust test-php check-stubs

# The fault suite in its long form (longer outages, more requests); its
# fast form runs in `make test`. FAULTS.md lists what each case proves.
faults: build
	PROPTEST_CASES=20000 $(ENGINE_CARGO) test --no-default-features --test properties
	FAULTS_LONG=1 GENERATED_CASES=50000 REDISLOCK_SO=$(CURDIR)/$(SO) $(PHP) /usr/bin/phpunit --configuration php/tests/phpunit.xml \
	  --filter 'FaultsTest|FpmFaultsTest|BadInputTest|GeneratedInputTest|testKilledWorkersLoseNothing|testLocksStillHeldAtRequestEndAreReleased|testAFatalError'

# Benchmarks against the peers and a private redis-server; writes
# bench/RESULTS.md.
bench: build
	tools/deps.sh bench
	REDISLOCK_SO=$(CURDIR)/$(SO) tools/with-redis.sh tools/bench.sh

test-rust: deps
	$(ENGINE_CARGO) test --no-default-features --lib --tests

test-php: build
	tools/frameworks.sh
	REDISLOCK_SO=$(CURDIR)/$(SO) $(PHP) /usr/bin/phpunit --configuration php/tests/phpunit.xml

stubs: deps $(DEBUG_SO)
	tools/stubs.sh $(DEBUG_SO) stubs

check-stubs: deps $(DEBUG_SO)
	rm -rf target/stubs-check
	tools/stubs.sh $(DEBUG_SO) target/stubs-check
	diff -ru stubs target/stubs-check && echo "stubs are in sync with the built extension"

install: build
	install -m 0755 $(SO) "$$(php-config --extension-dir)/redislock.so"
	for d in /etc/php/8.2/mods-available; do \
	  [ -d $$d ] && echo "extension=redislock.so" > $$d/redislock.ini; done
	command -v phpenmod >/dev/null && phpenmod redislock || true

clean:
	cargo clean
