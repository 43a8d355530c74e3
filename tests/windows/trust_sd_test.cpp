// Judges real security descriptors, built by Windows itself from SDDL text, with cvm's
// judge_security() (src/platform/windows/security.cpp): owners Wine cannot give a file (another
// user, Administrators, TrustedInstaller) and access lists it does not make (Authenticated Users'
// Modify, inherit-only entries, no list at all). Built by tests/integration/windows_trust.sh
// with mingw-w64 and run under Wine; prints one line per failed case and exits 1 if any failed.
#include "platform/windows/security.h"

#include <sddl.h>

#include <cstdio>
#include <string>

using cvm::platform::win::judge_security;
using cvm::platform::win::SecurityVerdict;

namespace {

const std::string kUser = "S-1-5-21-1-2-3-1001";
int failures = 0;

// `owner_ok`: the owner is trusted; `writer`: the account expected to be found writing ("-" for
// none, "" for a missing access list).
void expect(const char* name, const std::string& sddl, bool owner_ok, const char* writer) {
    PSECURITY_DESCRIPTOR sd = nullptr;
    PSID user = nullptr;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorA(sddl.c_str(), SDDL_REVISION_1, &sd, nullptr) ||
        !ConvertStringSidToSidA(kUser.c_str(), &user)) {
        std::printf("FAIL %s: Windows could not build %s (error %lu)\n", name, sddl.c_str(), GetLastError());
        ++failures;
        return;
    }
    SecurityVerdict v = judge_security(sd, user);
    const bool want_writable = std::string(writer) != "-";
    if (!v.read || v.owner_trusted != owner_ok || v.writable_by_others != want_writable ||
        (want_writable && v.writer_sid != writer)) {
        std::printf("FAIL %s: %s -> read %d owner %s trusted %d writable %d by '%s'\n", name, sddl.c_str(), v.read,
                    v.owner_sid.c_str(), v.owner_trusted, v.writable_by_others, v.writer_sid.c_str());
        ++failures;
    } else {
        std::printf("ok %s\n", name);
    }
    LocalFree(sd);
    LocalFree(user);
}

// No access list at all (SDDL's NO_ACCESS_CONTROL, which Wine's parser does not make): built
// with the descriptor calls instead.
void null_dacl() {
    SECURITY_DESCRIPTOR sd;
    PSID user = nullptr;
    if (!InitializeSecurityDescriptor(&sd, SECURITY_DESCRIPTOR_REVISION) ||
        !ConvertStringSidToSidA(kUser.c_str(), &user) || !SetSecurityDescriptorOwner(&sd, user, FALSE) ||
        !SetSecurityDescriptorDacl(&sd, TRUE, nullptr, FALSE)) {
        std::printf("FAIL no access list: Windows could not build it (error %lu)\n", GetLastError());
        ++failures;
        return;
    }
    SecurityVerdict v = judge_security(&sd, user);
    if (!v.read || !v.owner_trusted || !v.writable_by_others || !v.writer_sid.empty()) {
        std::printf("FAIL no access list: read %d trusted %d writable %d by '%s'\n", v.read, v.owner_trusted,
                    v.writable_by_others, v.writer_sid.c_str());
        ++failures;
    } else {
        std::printf("ok no access list\n");
    }
    LocalFree(user);
}

// Every account besides the owner that may change the file, in the list's order, once each:
// what trusted_owners is compared with (config/trust.cpp).
void all_writers() {
    const std::string sddl = "O:" + kUser + "D:(A;;FA;;;" + kUser + ")(A;;0x2;;;S-1-5-21-1-2-3-1002)" +
                             "(A;;FR;;;WD)(A;;GA;;;BU)(A;;0x4;;;S-1-5-21-1-2-3-1002)";
    PSECURITY_DESCRIPTOR sd = nullptr;
    PSID user = nullptr;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorA(sddl.c_str(), SDDL_REVISION_1, &sd, nullptr) ||
        !ConvertStringSidToSidA(kUser.c_str(), &user)) {
        std::printf("FAIL all writers: Windows could not build %s\n", sddl.c_str());
        ++failures;
        return;
    }
    SecurityVerdict v = judge_security(sd, user);
    std::string got;
    for (const auto& w : v.writer_sids) got += w + " ";
    if (got != "S-1-5-21-1-2-3-1002 S-1-5-32-545 ") {
        std::printf("FAIL all writers: got '%s'\n", got.c_str());
        ++failures;
    } else {
        std::printf("ok all writers\n");
    }
    LocalFree(sd);
    LocalFree(user);
}

// trusted_owners items: SIDs as text, names Windows resolves; nothing for unknown names and for
// accounts that stand for anyone.
void listed_accounts() {
    using namespace cvm::platform::win;
    struct Case {
        const char* item;
        const char* sid; // "" when it must trust nobody
    } cases[] = {
        {"S-1-5-21-1-2-3-1002", "S-1-5-21-1-2-3-1002"},
        {"s-1-5-7", "S-1-5-7"},
        {"Administrators", "S-1-5-32-544"},
        {"SYSTEM", "S-1-5-18"},
        {"S-1-1-0", ""},
        {"Everyone", ""},
        {"Users", ""},
        {"S-1-5-11", ""},
        {"S-1-5-21-1-2-3-513", ""},
        {"no-such-account-of-cvm", ""},
        {"S-1-5-x", ""},
    };
    for (const Case& c : cases) {
        auto uid = listed_account_uid(c.item);
        std::string got = uid ? account_sid(*uid) : "";
        bool ok = got == c.sid && (!uid || *uid == account_uid(c.sid));
        std::printf("%s listed %s -> '%s'\n", ok ? "ok" : "FAIL", c.item, got.c_str());
        if (!ok) ++failures;
    }
}

} // namespace

int main() {
    const std::string me = "O:" + kUser + "D:";
    const std::string mine = "(A;;FA;;;" + kUser + ")(A;;FA;;;SY)";
    // Owners.
    expect("own file", me + mine + "(A;;0x1200a9;;;BU)", true, "-");
    expect("SYSTEM's", "O:SYD:(A;;FA;;;SY)(A;;0x1200a9;;;WD)", true, "-");
    expect("Administrators'", "O:BAD:(A;;FA;;;BA)(A;;FA;;;SY)(A;;0x1200a9;;;BU)", true, "-");
    expect("TrustedInstaller's",
           "O:S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464D:"
           "(A;;FA;;;S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464)(A;;0x1200a9;;;BU)",
           true, "-");
    expect("another user's", "O:S-1-5-21-1-2-3-1002D:(A;;0x1200a9;;;WD)", false, "-");
    expect("another user's, who may write it", "O:S-1-5-21-1-2-3-1002D:(A;;FA;;;S-1-5-21-1-2-3-1002)", false, "-");
    expect("another user's, a third may write", "O:S-1-5-21-1-2-3-1002D:(A;;FA;;;BU)", false, "S-1-5-32-545");
    expect("Users own it", "O:BUD:(A;;0x1200a9;;;WD)", false, "-");
    expect("Wine's other owner", "O:AND:(A;;FA;;;SY)(A;;FA;;;AN)(A;;0x1200a9;;;WD)", false, "-");
    // Who may change it.
    expect("Authenticated Users' Modify", me + mine + "(A;OICI;0x1301bf;;;AU)", true, "S-1-5-11");
    expect("Everyone's full control", me + mine + "(A;;FA;;;WD)", true, "S-1-1-0");
    expect("generic all for Users", me + mine + "(A;;GA;;;BU)", true, "S-1-5-32-545");
    expect("generic write for Users", me + mine + "(A;;GW;;;BU)", true, "S-1-5-32-545");
    expect("append only", me + mine + "(A;;0x4;;;BU)", true, "S-1-5-32-545");
    expect("add files to a folder", me + mine + "(A;;0x2;;;S-1-5-21-1-2-3-1002)", true, "S-1-5-21-1-2-3-1002");
    expect("delete children", me + mine + "(A;;0x40;;;BU)", true, "S-1-5-32-545");
    expect("change the access list", me + mine + "(A;;0x40000;;;BU)", true, "S-1-5-32-545");
    expect("take ownership", me + mine + "(A;;0x80000;;;BU)", true, "S-1-5-32-545");
    expect("read and run only", me + mine + "(A;;FR;;;WD)(A;;FX;;;BU)(A;;0x1200a9;;;AU)", true, "-");
    null_dacl();
    expect("an empty access list", me, true, "-");
    expect("for what is made inside only", me + mine + "(A;OICIIO;FA;;;CO)(A;OICIIO;GA;;;BU)", true, "-");
    expect("owner rights of a trusted owner", me + mine + "(A;;FA;;;OW)", true, "-");
    expect("a deny is not weighed", me + "(D;;FA;;;WD)" + mine + "(A;;FA;;;BU)", true, "S-1-5-32-545");
    expect("Administrators may write", me + mine + "(A;;FA;;;BA)", true, "-");
    // Administrators stand for root: their files are trusted whether or not the user is one of
    // them (kUser is not), as root's are on POSIX; only an elevated administrator can make one.
    expect("Administrators' for a user who is not one", "O:BAD:(A;;FA;;;BA)(A;;0x1200a9;;;BU)", true, "-");
    all_writers();
    listed_accounts();
    std::printf("%d failed\n", failures);
    return failures ? 1 : 0;
}
