dnl redislock for phpize and PIE: the extension is a Rust crate (the
dnl repository root, one level up); this only finds cargo and hands the
dnl build to it (Makefile.frag), for the PHP whose php-config configured
dnl the build.

PHP_ARG_ENABLE([redislock],
  [whether to enable redislock],
  [AS_HELP_STRING([--enable-redislock], [Enable redislock (built with cargo; Rust >= 1.89)])],
  [yes])

PHP_ARG_WITH([cargo],
  [for the cargo to build with],
  [AS_HELP_STRING([--with-cargo=PATH], [cargo to build with [cargo on PATH, then ~/.cargo/bin/cargo]])],
  [auto],
  [no])

if test "$PHP_REDISLOCK" != "no"; then
  if test "$PHP_CARGO" != "auto" && test "$PHP_CARGO" != "yes"; then
    CARGO=$PHP_CARGO
  else
    AC_PATH_PROG([CARGO], [cargo], [], [$PATH:$HOME/.cargo/bin])
  fi
  if test -z "$CARGO" || ! test -x "$CARGO"; then
    AC_MSG_ERROR([cargo not found: install Rust >= 1.89 with rustup (https://rustup.rs), or pass --with-cargo=PATH])
  fi
  AC_MSG_CHECKING([for Rust >= 1.89])
  RUST_VERSION=`"$CARGO" --version 2>/dev/null | cut -d' ' -f2`
  case "$RUST_VERSION" in
    1.[[0-9]].*|1.[[0-7]][[0-9]].*|1.8[[0-8]].*|"")
      AC_MSG_RESULT([no, $RUST_VERSION])
      AC_MSG_ERROR([redislock needs Rust >= 1.89 (edition 2024); update it with rustup update]) ;;
    *) AC_MSG_RESULT([yes, $RUST_VERSION]) ;;
  esac
  AC_MSG_CHECKING([for libclang (bindgen reads the PHP headers with it)])
  REDISLOCK_LIBCLANG=
  dnl libclang itself (libclang.so*, libclang-14.so*), not libclang-cpp.
  for dir in "$LIBCLANG_PATH" /usr/lib/llvm*/lib /usr/lib/* /usr/lib /usr/lib64; do
    for f in "$dir"/libclang.so* "$dir"/libclang-[[0-9]]*.so*; do
      test -e "$f" && REDISLOCK_LIBCLANG=$f
    done
  done
  if test -n "$REDISLOCK_LIBCLANG"; then
    AC_MSG_RESULT([$REDISLOCK_LIBCLANG])
  else
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([libclang not found: install libclang-dev (Debian, Ubuntu), clang-dev (Alpine) or clang-devel, or set LIBCLANG_PATH])
  fi
  dnl ext-php-rs reads PHP_CONFIG as a path: resolve "php-config" (the default).
  REDISLOCK_PHP_CONFIG=`command -v "$PHP_CONFIG" 2>/dev/null`
  case "$REDISLOCK_PHP_CONFIG" in
    /*) ;;
    "") AC_MSG_ERROR([php-config not found: $PHP_CONFIG]) ;;
    *) REDISLOCK_PHP_CONFIG="`pwd`/$REDISLOCK_PHP_CONFIG" ;;
  esac
  PHP_SUBST([CARGO])
  PHP_SUBST([REDISLOCK_PHP_CONFIG])
  PHP_ADD_BUILD_DIR([modules])
  PHP_ADD_MAKEFILE_FRAGMENT([$abs_srcdir/Makefile.frag], [$abs_srcdir], [$abs_builddir])
fi
