/* A fake nvcc.exe for the Windows tests (built by mingw-w64, run under Wine): prints what it
 * sees, so a test can check the environment a shim or `cvm exec` gave it.
 *
 *   x86_64-w64-mingw32-gcc -municode -DFAKE_RELEASE=\"11.2\" -DFAKE_BUILD=\"152\" \
 *       -o nvcc.exe fake_nvcc.c
 *
 * Output, one `NAME=value` line each (UTF-8): self (its own path), CUDA_PATH, CUDA_PATH_V11_2,
 * CUDA_HOME, CUDNN_PATH, CVM_ACTIVE, PATH, CUDAHOSTCXX, CUDACXX, NVCC_CCBIN, args (the arguments joined
 * by '|'). With --version it
 * prints nvcc's version text instead. The exit code is FAKE_NVCC_EXIT (default 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>
#include <windows.h>

#ifndef FAKE_RELEASE
#define FAKE_RELEASE "11.2"
#endif
#ifndef FAKE_BUILD
#define FAKE_BUILD "152"
#endif

static void put_utf8(const wchar_t* text) {
    int size = WideCharToMultiByte(CP_UTF8, 0, text, -1, NULL, 0, NULL, NULL);
    if (size <= 1) return;
    char* buffer = (char*)malloc((size_t)size);
    if (!buffer) return;
    WideCharToMultiByte(CP_UTF8, 0, text, -1, buffer, size, NULL, NULL);
    fputs(buffer, stdout);
    free(buffer);
}

static void put_variable(const wchar_t* name) {
    static wchar_t value[32768];
    DWORD n = GetEnvironmentVariableW(name, value, 32768);
    put_utf8(name);
    if (n == 0 && GetLastError() == ERROR_ENVVAR_NOT_FOUND) {
        fputs("=<unset>\n", stdout);
        return;
    }
    fputs("=", stdout);
    put_utf8(value);
    fputs("\n", stdout);
}

int wmain(int argc, wchar_t** argv) {
    static wchar_t self[32768];
    const char* code;
    int i;
    for (i = 1; i < argc; ++i) {
        if (wcscmp(argv[i], L"--version") == 0) {
            printf("nvcc: NVIDIA (R) Cuda compiler driver\n"
                   "Copyright (c) 2005-2021 NVIDIA Corporation\n"
                   "Cuda compilation tools, release %s, V%s.%s\n",
                   FAKE_RELEASE, FAKE_RELEASE, FAKE_BUILD);
            return 0;
        }
    }
    printf("fake nvcc %s\n", FAKE_RELEASE);
    GetModuleFileNameW(NULL, self, 32768);
    fputs("self=", stdout);
    put_utf8(self);
    fputs("\n", stdout);
    put_variable(L"CUDA_PATH");
    put_variable(L"CUDA_PATH_V11_2");
    put_variable(L"CUDA_HOME");
    put_variable(L"CUDNN_PATH");
    put_variable(L"CVM_ACTIVE");
    put_variable(L"PATH");
    put_variable(L"CUDAHOSTCXX");
    put_variable(L"CUDACXX");
    put_variable(L"NVCC_CCBIN");
    fputs("args=", stdout);
    for (i = 1; i < argc; ++i) {
        if (i > 1) fputs("|", stdout);
        put_utf8(argv[i]);
    }
    fputs("\n", stdout);
    fflush(stdout);
    code = getenv("FAKE_NVCC_EXIT");
    return code ? atoi(code) : 0;
}
