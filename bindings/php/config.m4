dnl config.m4 for the mcds PHP extension (phpize && ./configure && make,
dnl or pecl install mcds-<version>.tgz, which runs the same).
dnl
dnl   (no option)              find libmcds with pkg-config (mcds.pc: the
dnl                            Debian package libmcds-dev, or a prefix from
dnl                            scripts/install-libmcds.sh PREFIX with
dnl                            PKG_CONFIG_PATH=PREFIX/lib/pkgconfig), else in
dnl                            /usr/local or /usr; --with-mcds is the same
dnl   --with-mcds=DIR          DIR/include/mcds.h and DIR/lib/libmcds.a: a
dnl                            prefix from scripts/install-libmcds.sh DIR, or
dnl                            the mcds source tree with --with-mcds-libdir
dnl   --with-mcds-libdir=DIR   where libmcds.a (cargo's libmcds_ffi.a, or libmcds.so) is, e.g. cargo's
dnl                            target/release (default: DIR/lib, or
dnl                            pkg-config's libdir)
dnl   --enable-mcds-dynamic    link libmcds.so with an rpath instead of
dnl                            libmcds.a (default: static); DIR/lib must then
dnl                            be an install (scripts/install-libmcds.sh DIR)
dnl                            with the SONAME link libmcds.so.0
dnl
dnl Static is the default: mcds.so then carries libmcds inside it and needs
dnl nothing but libc at run time, so php-fpm and php-cgi (which may run
dnl with a clean environment, chrooted, or under another user) load it with
dnl no rpath, LD_LIBRARY_PATH or ldconfig, and a libmcds of another version
dnl elsewhere on the machine cannot be picked up instead. libmcds's symbols
dnl stay inside mcds.so (--exclude-libs), so a second Rust library in the
dnl same PHP process cannot clash with them.

PHP_ARG_WITH([mcds],
  [for mcds support],
  [AS_HELP_STRING([[--with-mcds[=DIR]]], [mcds support: DIR holds include/mcds.h and lib/libmcds.a (default: found by pkg-config as mcds, else in /usr/local or /usr)])],
  [yes])

PHP_ARG_WITH([mcds-libdir],
  [for the directory of libmcds],
  [AS_HELP_STRING([--with-mcds-libdir=DIR], [mcds: the directory of libmcds.a/libmcds.so (default: the --with-mcds DIR/lib, or pkg-config's libdir)])],
  [no], [no])

PHP_ARG_ENABLE([mcds-dynamic],
  [whether to link libmcds.so instead of libmcds.a],
  [AS_HELP_STRING([--enable-mcds-dynamic], [mcds: link libmcds.so with an rpath instead of libmcds.a])],
  [no], [no])

dnl pecl install passes --with-mcds= when its prompt is answered with nothing.
if test -z "$PHP_MCDS" || test "$PHP_MCDS" = "autodetect"; then PHP_MCDS=yes; fi

if test "$PHP_MCDS" != "no"; then
  MCDS_INCDIR=""
  MCDS_LIBDIR=""
  if test "$PHP_MCDS" = "yes"; then
    PKG_PROG_PKG_CONFIG
    AC_MSG_CHECKING([for libmcds with pkg-config (mcds.pc)])
    if test -n "$PKG_CONFIG" && $PKG_CONFIG --exists mcds; then
      MCDS_INCDIR=`$PKG_CONFIG --variable=includedir mcds`
      MCDS_LIBDIR=`$PKG_CONFIG --variable=libdir mcds`
      MCDS_PC_VERSION=`$PKG_CONFIG --modversion mcds`
      AC_MSG_RESULT([libmcds $MCDS_PC_VERSION in $MCDS_LIBDIR])
    else
      AC_MSG_RESULT([no])
      for dir in /usr/local /usr; do
        if test -z "$MCDS_INCDIR" && test -r "$dir/include/mcds.h"; then
          MCDS_INCDIR="$dir/include"
          MCDS_LIBDIR="$dir/lib"
        fi
      done
    fi
  else
    MCDS_INCDIR="$PHP_MCDS/include"
    MCDS_LIBDIR="$PHP_MCDS/lib"
  fi
  AC_MSG_CHECKING([for mcds.h])
  if test -n "$MCDS_INCDIR" && test -r "$MCDS_INCDIR/mcds.h"; then
    AC_MSG_RESULT([$MCDS_INCDIR/mcds.h])
  else
    AC_MSG_RESULT([not found])
    AC_MSG_ERROR([mcds.h not found: install libmcds (the Debian package libmcds-dev, or scripts/install-libmcds.sh PREFIX with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, so that pkg-config finds mcds), or pass --with-mcds=DIR with DIR/include/mcds.h])
  fi
  if test "$PHP_MCDS_LIBDIR" != "no" && test "$PHP_MCDS_LIBDIR" != "yes"; then
    MCDS_LIBDIR="$PHP_MCDS_LIBDIR"
  fi
  PHP_ADD_INCLUDE([$MCDS_INCDIR])

  if test "$PHP_MCDS_DYNAMIC" = "no"; then
    dnl In cargo's target dir it is libmcds_ffi.a (cargo names it for the
    dnl crate, mcds-ffi), installed it is libmcds.a. The cargo name comes
    dnl first: a target dir built before the rename still holds a stale
    dnl libmcds.a that cargo never deletes.
    AC_MSG_CHECKING([for libmcds.a])
    MCDS_STATIC_LIB=""
    for candidate in libmcds_ffi.a libmcds.a; do
      if test -z "$MCDS_STATIC_LIB" && test -r "$MCDS_LIBDIR/$candidate"; then
        MCDS_STATIC_LIB="$MCDS_LIBDIR/$candidate"
      fi
    done
    if test -n "$MCDS_STATIC_LIB"; then
      AC_MSG_RESULT([$MCDS_STATIC_LIB])
    else
      AC_MSG_RESULT([not found])
      AC_MSG_ERROR([neither libmcds.a nor libmcds_ffi.a is in $MCDS_LIBDIR: libmcds-dev and scripts/install-libmcds.sh install libmcds.a; in the source tree, build it with cargo build --release -p mcds-ffi and pass --with-mcds-libdir=<cargo target dir>/release])
    fi
    dnl The Rust staticlib needs libpthread, libdl and libm (as its README says).
    MCDS_SHARED_LIBADD="-Wl,--exclude-libs,ALL $MCDS_STATIC_LIB -lpthread -ldl -lm"
    AC_DEFINE([MCDS_STATIC], [1], [libmcds is linked statically])
  else
    AC_MSG_CHECKING([for libmcds.so])
    if test -r "$MCDS_LIBDIR/libmcds.so"; then
      AC_MSG_RESULT([$MCDS_LIBDIR/libmcds.so])
    else
      AC_MSG_RESULT([not found])
      AC_MSG_ERROR([libmcds.so not found in $MCDS_LIBDIR])
    fi
    dnl PHP_ADD_LIBRARY_WITH_PATH adds -L and the rpath (-Wl,-rpath), as
    dnl pkg-config's Libs would.
    PHP_ADD_LIBRARY_WITH_PATH([mcds], [$MCDS_LIBDIR], [MCDS_SHARED_LIBADD])
  fi

  dnl Check that the header and the library link together.
  old_LIBS=$LIBS
  old_CFLAGS=$CFLAGS
  LIBS="$LIBS $MCDS_SHARED_LIBADD"
  if test "$PHP_MCDS_DYNAMIC" != "no"; then LIBS="$LIBS -L$MCDS_LIBDIR -lmcds"; fi
  CFLAGS="$CFLAGS -I$MCDS_INCDIR"
  AC_MSG_CHECKING([that libmcds links])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include "mcds.h"]], [[return mcds_version() == 0;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([cannot link a program against libmcds in $MCDS_LIBDIR])])
  LIBS=$old_LIBS
  CFLAGS=$old_CFLAGS

  PHP_SUBST(MCDS_SHARED_LIBADD)

  dnl The sources: mcds.c and the file of each handle class, the third field
  dnl of each X(Class, stem, file) line of MCDS_HANDLE_CLASSES in
  dnl mcds_classes.h (uniq: two classes may share a file). The sed script
  dnl has no brackets, which m4 would take for its quotes.
  mcds_classes_h="PHP_EXT_SRCDIR([mcds])/mcds_classes.h"
  AC_MSG_CHECKING([for the handle classes' sources (mcds_classes.h)])
  test -r "$mcds_classes_h" || AC_MSG_ERROR([$mcds_classes_h not found])
  MCDS_CLASS_SOURCES=`sed -n '/^#define MCDS_HANDLE_CLASSES/,/^#endif/s/^.*X(.*,.*, *\(.*\)).*$/\1.c/p' "$mcds_classes_h" | uniq | tr '\n' ' ' | sed 's/ *$//'`
  test -n "$MCDS_CLASS_SOURCES" || AC_MSG_ERROR([no X(Class, stem, file) line found in $mcds_classes_h])
  AC_MSG_RESULT([$MCDS_CLASS_SOURCES])
  PHP_NEW_EXTENSION(mcds,
    [mcds.c $MCDS_CLASS_SOURCES],
    $ext_shared,, [-Wall -Wextra -Wno-unused-parameter -fvisibility=hidden -DZEND_ENABLE_STATIC_TSRMLS_CACHE=1])
fi
