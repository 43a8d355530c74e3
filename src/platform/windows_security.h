#pragma once
// Windows' side of the trust rules (core/trust.h): whose a file is and who may change it, read
// from its security descriptor. A file or folder is trusted when
//   - its owner is the user cvm runs as, SYSTEM, Administrators or TrustedInstaller, and
//   - no allow entry of its access list (DACL) that applies to it lets another account change it
//     (write or append data, add files, delete children, change the access list or the owner);
//     a missing access list lets everybody do anything.
// Deny entries are not weighed (a deny that would make an allow harmless is rare; refusing then
// is the safe side). Only compiled for Windows.
#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <string>

namespace cvm::platform::win {

struct SecurityVerdict {
    bool read = false;             // the descriptor could be read
    bool owner_trusted = false;
    bool writable_by_others = false;
    std::string owner_sid;         // "S-1-5-7"
    std::string writer_sid;        // the first other account that may write ("S-1-1-0"); "" with no DACL
};

// Judges a security descriptor (with owner and DACL) for `user`, the account cvm acts for.
SecurityVerdict judge_security(PSECURITY_DESCRIPTOR sd, PSID user);

// The descriptor of an open handle (opened with READ_CONTROL) or of a path, judged for the
// process's user. `read` is false when it cannot be read (then nothing is known: callers treat
// the file as not theirs).
SecurityVerdict security_of(HANDLE handle);
SecurityVerdict security_of(const std::wstring& path);

// The user of the process's token (cached for the process).
PSID current_user_sid();

// "BUILTIN\Users (S-1-5-32-545)", or the SID alone when it has no name here.
std::string account_text(const std::string& sid);

} // namespace cvm::platform::win
#endif
