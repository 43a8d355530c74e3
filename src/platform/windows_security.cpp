#include "platform/windows_security.h"

#ifdef _WIN32
#include <aclapi.h>
#include <sddl.h>

#include <cstring>
#include <vector>

namespace cvm::platform::win {

namespace {

std::string sid_string(PSID sid) {
    LPSTR text = nullptr;
    if (!sid || !ConvertSidToStringSidA(sid, &text)) return {};
    std::string out(text);
    LocalFree(text);
    return out;
}

// Accounts that may own and change what cvm runs besides the user: the system itself, the
// machine's administrators (who could change anything anyway) and the servicing account that
// owns Windows' own files; CREATOR OWNER and OWNER RIGHTS stand for the owner, judged apart.
bool is_system_account(const std::string& sid) {
    return sid == "S-1-5-18" || sid == "S-1-5-32-544" ||
           sid == "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464";
}

bool stands_for_owner(const std::string& sid) { return sid == "S-1-3-0" || sid == "S-1-3-4"; }

// Rights that let an account change a file or what a folder holds, or give itself those.
constexpr ACCESS_MASK kChangeRights = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_DELETE_CHILD | WRITE_DAC |
                                      WRITE_OWNER | GENERIC_WRITE | GENERIC_ALL | MAXIMUM_ALLOWED;

// The SID of an allow entry; nullptr for entries that allow nothing.
PSID allowed_sid(const ACE_HEADER* ace, ACCESS_MASK* mask) {
    switch (ace->AceType) {
    case ACCESS_ALLOWED_ACE_TYPE:
    case ACCESS_ALLOWED_CALLBACK_ACE_TYPE: {
        auto* a = reinterpret_cast<const ACCESS_ALLOWED_ACE*>(ace);
        *mask = a->Mask;
        return const_cast<DWORD*>(&a->SidStart);
    }
    case ACCESS_ALLOWED_OBJECT_ACE_TYPE:
    case ACCESS_ALLOWED_CALLBACK_OBJECT_ACE_TYPE: {
        auto* a = reinterpret_cast<const ACCESS_ALLOWED_OBJECT_ACE*>(ace);
        *mask = a->Mask;
        // The two GUIDs are there only when the flags say so; the SID follows them.
        const BYTE* p = reinterpret_cast<const BYTE*>(&a->ObjectType);
        if (a->Flags & ACE_OBJECT_TYPE_PRESENT) p += sizeof(GUID);
        if (a->Flags & ACE_INHERITED_OBJECT_TYPE_PRESENT) p += sizeof(GUID);
        return const_cast<BYTE*>(p);
    }
    default:
        return nullptr;
    }
}

} // namespace

PSID current_user_sid() {
    static std::vector<BYTE> user = [] {
        std::vector<BYTE> buf;
        HANDLE token = nullptr;
        if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return buf;
        DWORD size = 0;
        GetTokenInformation(token, TokenUser, nullptr, 0, &size);
        std::vector<BYTE> info(size ? size : 1);
        if (size && GetTokenInformation(token, TokenUser, info.data(), size, &size)) {
            PSID sid = reinterpret_cast<TOKEN_USER*>(info.data())->User.Sid;
            buf.resize(GetLengthSid(sid));
            CopySid(static_cast<DWORD>(buf.size()), buf.data(), sid);
        }
        CloseHandle(token);
        return buf;
    }();
    return user.empty() ? nullptr : static_cast<PSID>(user.data());
}

SecurityVerdict judge_security(PSECURITY_DESCRIPTOR sd, PSID user) {
    SecurityVerdict v;
    if (!sd) return v;
    PSID owner = nullptr;
    BOOL defaulted = FALSE;
    if (!GetSecurityDescriptorOwner(sd, &owner, &defaulted) || !owner) return v;
    BOOL present = FALSE;
    PACL dacl = nullptr;
    if (!GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted)) return v;
    v.read = true;
    v.owner_sid = sid_string(owner);
    const std::string user_sid = sid_string(user);
    v.owner_trusted = (!user_sid.empty() && v.owner_sid == user_sid) || is_system_account(v.owner_sid);
    if (!present || !dacl) { // no access list: everybody may do everything
        v.writable_by_others = true;
        return v;
    }
    for (DWORD i = 0; i < dacl->AceCount; ++i) {
        LPVOID raw = nullptr;
        if (!GetAce(dacl, i, &raw)) continue;
        auto* ace = static_cast<const ACE_HEADER*>(raw);
        if (ace->AceFlags & INHERIT_ONLY_ACE) continue; // for what is made inside, not for this
        ACCESS_MASK mask = 0;
        PSID sid = allowed_sid(ace, &mask);
        if (!sid || !(mask & kChangeRights) || !IsValidSid(sid)) continue;
        std::string who = sid_string(sid);
        if (who == user_sid || is_system_account(who)) continue;
        // The owner may always change its file: whether the owner is trusted is judged apart.
        if (stands_for_owner(who) || who == v.owner_sid) continue;
        v.writable_by_others = true;
        v.writer_sid = who;
        break;
    }
    return v;
}

SecurityVerdict security_of(HANDLE handle) {
    PSECURITY_DESCRIPTOR sd = nullptr;
    if (GetSecurityInfo(handle, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, nullptr,
                        nullptr, nullptr, nullptr, &sd) != ERROR_SUCCESS)
        return {};
    SecurityVerdict v = judge_security(sd, current_user_sid());
    LocalFree(sd);
    return v;
}

SecurityVerdict security_of(const std::wstring& path) {
    PSECURITY_DESCRIPTOR sd = nullptr;
    if (GetNamedSecurityInfoW(path.c_str(), SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                              nullptr, nullptr, nullptr, nullptr, &sd) != ERROR_SUCCESS)
        return {};
    SecurityVerdict v = judge_security(sd, current_user_sid());
    LocalFree(sd);
    return v;
}

std::string account_text(const std::string& sid_text) {
    PSID sid = nullptr;
    if (sid_text.empty() || !ConvertStringSidToSidA(sid_text.c_str(), &sid)) return sid_text;
    char name[256], domain[256];
    DWORD name_size = sizeof name, domain_size = sizeof domain;
    SID_NAME_USE use;
    std::string out = sid_text;
    if (LookupAccountSidA(nullptr, sid, name, &name_size, domain, &domain_size, &use) && name[0])
        out = (domain[0] ? std::string(domain) + "\\" : std::string()) + name + " (" + sid_text + ")";
    LocalFree(sid);
    return out;
}

} // namespace cvm::platform::win
#endif
