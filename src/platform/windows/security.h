#pragma once
// Windows' side of the trust rules (config/trust.h): whose a file is and who may change it, read
// from its security descriptor once, with the file (files.cpp), and judged there (trust.cpp). A
// file or folder is trusted when
//   - its owner is the user cvm runs as, SYSTEM, Administrators or TrustedInstaller (judged
//     here), or an account listed in trusted_owners (judged by trust.cpp), and
//   - no allow entry of its access list (DACL) that applies to it lets another account change it
//     (write or append data, add files, delete children, change the access list or the owner);
//     a missing access list lets everybody do anything. The accounts that may are all kept
//     (writer_sids), so listed ones can be let through.
// Administrators' files are trusted whether or not the user is one of them (no
// CheckTokenMembership, unlike git's safe.directory): only an elevated administrator can make
// one, so they are root's files; git asks for membership since it trusts only the user's own.
// Deny entries are not weighed (a deny that would make an allow harmless is rare; refusing then
// is the safe side). Only compiled for Windows.
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cvm::platform::win {

struct SecurityVerdict {
    bool read = false; // the descriptor could be read
    bool owner_trusted = false;
    bool writable_by_others = false;
    std::string owner_sid;  // "S-1-5-7"
    std::string writer_sid; // the first other account that may write ("S-1-1-0"); "" with no DACL
    std::vector<std::string> writer_sids; // every other account that may write, in the list's order
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

// Accounts said as numbers, the ids of trusted_owners (platform.h: listed_owner_id), so the trust
// checks can compare an owner with them: each SID seen gets a number of its own for the process,
// kAccountBase and up.
constexpr std::uint32_t kAccountBase = 0x80000000u;
std::uint32_t account_uid(const std::string& sid);
std::string account_sid(std::uint32_t uid); // "" for a number not given out
// Everyone, Authenticated Users, Users, Guests, Interactive, Anonymous... accounts that stand
// for any user: never trusted, even when listed.
bool stands_for_anyone(const std::string& sid);
// The uid of an item of trusted_owners: a SID as text ("S-1-5-21-...-1001") or an account name
// ("CUDAADMIN", "DOMAIN\\builder") Windows resolves; nullopt for an account it does not know
// and for one that stands for anyone.
std::optional<std::uint32_t> listed_account_uid(const std::string& name_or_sid);

} // namespace cvm::platform::win
