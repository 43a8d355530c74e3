// The Windows half of the signal clean-up registry (cleanup_detail.h): a console handler for
// Ctrl-C, Ctrl-Break and the console's close.
#include <csignal>
#include <mutex>

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <wchar.h>
#include <windows.h>

#include "platform/cleanup_detail.h"

namespace cvm::platform::cleanup {

namespace {

// Windows runs console handlers on a thread of their own: the whole clean-up happens there, then
// the default handler ends the process.
BOOL WINAPI on_console_event(DWORD event) {
    if (event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT || event == CTRL_CLOSE_EVENT) {
        g_signal.store(SIGINT);
        g_interrupted.store(true);
        clean_up_after_interrupt();
    }
    return FALSE;
}

} // namespace

void arm(Removal) {
    static std::once_flag once;
    std::call_once(once, [] { SetConsoleCtrlHandler(on_console_event, TRUE); });
}

void unlink_path(const PathChar* path) {
    _wunlink(path);
}

bool registered_here() {
    return true;
}

void end_by_signal(int) {} // the console handler's return ends the process

} // namespace cvm::platform::cleanup
