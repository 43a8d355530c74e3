// Reading and judging security descriptors on Windows (security.h).
#include "platform/windows/security.h"

#include <aclapi.h>
#include <sddl.h>

#include <cstring>
#include <mutex>
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

bool stands_for_owner(const std::string& sid) {
    return sid == "S-1-3-0" || sid == "S-1-3-4";
}

// Rights that let an account change a file or what a folder holds, or give itself those.
constexpr ACCESS_MASK kChangeRights = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_DELETE_CHILD |
                                      WRITE_DAC | WRITE_OWNER | GENERIC_WRITE | GENERIC_ALL |
                                      MAXIMUM_ALLOWED;

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
    v.owner_trusted =
        (!user_sid.empty() && v.owner_sid == user_sid) || is_system_account(v.owner_sid);
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
        if (v.writer_sid.empty()) v.writer_sid = who;
        bool seen = false;
        for (const std::string& w : v.writer_sids)
            seen = seen || w == who;
        if (!seen) v.writer_sids.push_back(who);
    }
    return v;
}

SecurityVerdict security_of(HANDLE handle) {
    PSECURITY_DESCRIPTOR sd = nullptr;
    if (GetSecurityInfo(handle, SE_FILE_OBJECT,
                        OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, nullptr, nullptr,
                        nullptr, nullptr, &sd) != ERROR_SUCCESS)
        return {};
    SecurityVerdict v = judge_security(sd, current_user_sid());
    LocalFree(sd);
    return v;
}

SecurityVerdict security_of(const std::wstring& path) {
    PSECURITY_DESCRIPTOR sd = nullptr;
    if (GetNamedSecurityInfoW(path.c_str(), SE_FILE_OBJECT,
                              OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, nullptr,
                              nullptr, nullptr, nullptr, &sd) != ERROR_SUCCESS)
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
        out =
            (domain[0] ? std::string(domain) + "\\" : std::string()) + name + " (" + sid_text + ")";
    LocalFree(sid);
    return out;
}

namespace {

// The SIDs given numbers, for the process (file_meta may run on several threads).
struct Accounts {
    std::mutex mutex;
    std::vector<std::string> sids;
};

Accounts& accounts() {
    static Accounts a;
    return a;
}

std::uint32_t number_locked(Accounts& a, const std::string& sid) {
    for (std::size_t i = 0; i < a.sids.size(); ++i)
        if (a.sids[i] == sid) return kAccountBase + static_cast<std::uint32_t>(i);
    a.sids.push_back(sid);
    return kAccountBase + static_cast<std::uint32_t>(a.sids.size() - 1);
}

} // namespace

std::uint32_t account_uid(const std::string& sid) {
    Accounts& a = accounts();
    std::lock_guard<std::mutex> lock(a.mutex);
    return number_locked(a, sid);
}

std::string account_sid(std::uint32_t uid) {
    Accounts& a = accounts();
    std::lock_guard<std::mutex> lock(a.mutex);
    if (uid < kAccountBase || uid - kAccountBase >= a.sids.size()) return {};
    return a.sids[uid - kAccountBase];
}

bool stands_for_anyone(const std::string& sid) {
    static const char* const anyone[] = {
        "S-1-1-0",  "S-1-2-0",      "S-1-2-1",      "S-1-5-2",      "S-1-5-4",
        "S-1-5-11", "S-1-5-32-545", "S-1-5-32-546", "S-1-5-32-547", "S-1-5-32-555"};
    for (const char* a : anyone)
        if (sid == a) return true;
    // A domain's Domain Users, Domain Guests and Domain Computers.
    if (sid.rfind("S-1-5-21-", 0) == 0) {
        std::string rid = sid.substr(sid.rfind('-') + 1);
        return rid == "513" || rid == "514" || rid == "515";
    }
    return false;
}

std::optional<std::uint32_t> listed_account_uid(const std::string& name_or_sid) {
    std::string sid_text;
    PSID sid = nullptr;
    if ((name_or_sid.rfind("S-1-", 0) == 0 || name_or_sid.rfind("s-1-", 0) == 0) &&
        ConvertStringSidToSidA(name_or_sid.c_str(), &sid)) {
        sid_text = sid_string(sid); // the canonical form
        LocalFree(sid);
    } else {
        std::wstring name;
        int n = MultiByteToWideChar(CP_UTF8, 0, name_or_sid.data(),
                                    static_cast<int>(name_or_sid.size()), nullptr, 0);
        name.resize(static_cast<std::size_t>(n));
        MultiByteToWideChar(CP_UTF8, 0, name_or_sid.data(), static_cast<int>(name_or_sid.size()),
                            name.data(), n);
        DWORD sid_size = 0, domain_size = 0;
        SID_NAME_USE use;
        LookupAccountNameW(nullptr, name.c_str(), nullptr, &sid_size, nullptr, &domain_size, &use);
        if (sid_size == 0) return std::nullopt;
        std::vector<BYTE> buf(sid_size);
        std::wstring domain(domain_size ? domain_size : 1, L'\0');
        if (!LookupAccountNameW(nullptr, name.c_str(), buf.data(), &sid_size, domain.data(),
                                &domain_size, &use))
            return std::nullopt;
        sid_text = sid_string(buf.data());
    }
    if (sid_text.empty() || stands_for_anyone(sid_text)) return std::nullopt;
    return account_uid(sid_text);
}

} // namespace cvm::platform::win
