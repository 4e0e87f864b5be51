# cargo builds the extension from the repository root for the PHP of
# php-config; `make` leaves it in modules/redislock.so, and `make
# install` (which may run under sudo, without cargo) only copies it.
# CARGO_TARGET_DIR moves cargo's build directory (default: ../target).

REDISLOCK_ROOT = $(abspath $(srcdir)/..)
REDISLOCK_TARGET = $(or $(CARGO_TARGET_DIR),$(REDISLOCK_ROOT)/target)

.PHONY: redislock-cargo redislock-built

all: redislock-cargo

redislock-cargo:
	cd "$(REDISLOCK_ROOT)" && PHP_CONFIG="$(REDISLOCK_PHP_CONFIG)" PHP="$(PHP_EXECUTABLE)" \
	  CARGO_TARGET_DIR="$(REDISLOCK_TARGET)" "$(CARGO)" build --release --locked
	$(mkinstalldirs) modules
	cp "$(REDISLOCK_TARGET)/release/libredislock.so" modules/redislock.so

install-modules: redislock-built

redislock-built:
	@test -f modules/redislock.so || { echo "modules/redislock.so is not built: run make (as the user who has cargo) before make install"; exit 1; }
