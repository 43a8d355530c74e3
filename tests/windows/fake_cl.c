/* A fake cl.exe for the Windows tests (built by mingw-w64, run under Wine): run alone it prints
 * what the real one prints, its banner and usage on stderr, and exits 0; with arguments it says
 * it was run (so a test sees which cl.exe nvcc got) and exits FAKE_CL_EXIT (default 0).
 *
 *   x86_64-w64-mingw32-gcc -DCL_VERSION=\"19.44.35211\" -o cl.exe fake_cl.c
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef CL_VERSION
#define CL_VERSION "19.29.30133"
#endif

int main(int argc, char** argv) {
    const char* code;
    if (argc == 1) {
        fprintf(stderr, "Microsoft (R) C/C++ Optimizing Compiler Version %s for x64\n"
                        "Copyright (C) Microsoft Corporation.  All rights reserved.\n\n"
                        "usage: cl [ option... ] filename... [ /link linkoption... ]\n",
                CL_VERSION);
        return 0;
    }
    printf("fake cl %s:", CL_VERSION);
    for (int i = 1; i < argc; ++i) printf(" %s", argv[i]);
    printf("\n");
    code = getenv("FAKE_CL_EXIT");
    return code ? atoi(code) : 0;
}
