/* bochscpu-python's wheel refers to these two C23 entry points of glibc >= 2.38; on an older
 * glibc, emulate.py loads this library first (RTLD_GLOBAL) so that the wheel's module links.
 * They differ from the classic functions only in accepting "0b" binary literals. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long long __isoc23_strtoull(const char *s, char **end, int base) {
    return strtoull(s, end, base);
}

int __isoc23_sscanf(const char *s, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int matched = vsscanf(s, format, args);
    va_end(args);
    return matched;
}
