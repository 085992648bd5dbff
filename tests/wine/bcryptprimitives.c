/* A stand-in bcryptprimitives.dll for Wine releases that lack it (Debian bookworm's Wine 8.0):
 * Rust's std (1.78 and later) imports ProcessPrng from it for every random number. This one
 * exports ProcessPrng alone, filled by RtlGenRandom (advapi32's SystemFunction036), which Wine
 * has. Only the Wine test (tests/tests/wine.rs) puts it next to redmark.exe; scripts/cross.sh
 * builds it with mingw-w64. Real Windows has its own and never sees this file. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Fills data[0..len) with random bytes; TRUE on success (as Windows' ProcessPrng always). */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
