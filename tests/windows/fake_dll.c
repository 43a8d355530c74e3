/* A small DLL standing for one of cuDNN's Windows libraries (cudnn_ops_infer64_8.dll, ...) in the
 * Windows tests: it exports one function saying which library it is. Its version resource comes
 * from version.rc (see build_fixtures.sh). */
#ifndef FAKE_DLL_NAME
#define FAKE_DLL_NAME "fake"
#endif

__declspec(dllexport) const char* cvmFakeLibraryName(void) {
    return FAKE_DLL_NAME;
}
