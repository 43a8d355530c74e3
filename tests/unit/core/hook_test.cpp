// The prompt hook's undo record: round trips of the record and what leaving a folder restores.
#include <catch2/catch.hpp>

#include <map>

#include "shells/hook.h"

using namespace cvm;
using platform::Os;

namespace {

using Env = std::map<std::string, std::string>;

EnvLookup lookup(const Env& env) {
    return [&env](const std::string& n) -> std::optional<std::string> {
        auto it = env.find(n);
        if (it == env.end()) return std::nullopt;
        return it->second;
    };
}

void apply_edits(Env& env, const std::vector<EnvChange>& changes) {
    for (const auto& c : changes) {
        if (c.value)
            env[c.name] = *c.value;
        else
            env.erase(c.name);
    }
}

} // namespace

TEST_CASE("the hook record survives any bytes in values", "[hook]") {
    HookState s;
    s.active = "12.4.1+9.1.0.70-cuda12";
    HookVar scalar;
    scalar.name = "CUDA_PATH";
    scalar.old_value = std::string("a,b;c%d\ne \xc3\xbc' \"$x");
    scalar.new_value = std::string("");
    HookVar unset_before;
    unset_before.name = "CUDNN_PATH";
    unset_before.new_value = "/x";
    HookVar list;
    list.name = "PATH";
    list.list = true;
    list.was_unset = true;
    list.added = {"/a,b", "%41"};
    list.removed = {{"", "/first"}, {"/x;y", ""}};
    s.vars = {scalar, unset_before, list};
    auto text = encode_hook_state(s);
    CHECK(text.find('\n') == std::string::npos);
    auto back = decode_hook_state(text);
    REQUIRE(back);
    CHECK(back->active == s.active);
    REQUIRE(back->vars.size() == 3);
    CHECK(back->vars[0].old_value == scalar.old_value);
    CHECK(back->vars[0].new_value == std::optional<std::string>(""));
    CHECK_FALSE(back->vars[1].old_value);
    CHECK(back->vars[1].new_value == std::optional<std::string>("/x"));
    CHECK(back->vars[2].list);
    CHECK(back->vars[2].was_unset);
    CHECK(back->vars[2].added == list.added);
    CHECK(back->vars[2].removed == list.removed);
}

TEST_CASE("a hand-edited hook record is refused, not half read", "[hook]") {
    for (const char* bad : {"", "1", "2;x", "1;x;Q,PATH,0", "1;x;S,PATH,1,%4", "1;x;S,PA TH,0,,0,",
                            "1;x;L,PATH,0,a", "1;x;L,PATH,2", "1;x;S,CUDA_PATH,0,junk,0,"}) {
        INFO(bad);
        CHECK_FALSE(decode_hook_state(bad));
    }
}

TEST_CASE("leaving takes back what the hook applied and keeps the user's edits", "[hook]") {
    Env env = {{"PATH", "/shims:/other/cuda-10.0/bin:/keep::/usr/bin"},
               {"CUDA_HOME", "orig"},
               {"CUDA_PATH", "orig path"}};
    const Env before = env;
    // What compute_environment would give: the toolkit first, the other toolkit out.
    std::vector<EnvChange> changes = {{"CUDA_PATH", "/tk"},
                                      {"CUDA_HOME", "/tk"},
                                      {"CUDA_PATH_V12_4", "/tk"},
                                      {"CUDNN_PATH", std::nullopt},
                                      {"PATH", "/tk/bin:/shims:/keep:/usr/bin"},
                                      {"LD_LIBRARY_PATH", "/tk/lib64"},
                                      {"CVM_ACTIVE", "12.4.1"}};
    auto state = record_hook("12.4.1", changes, lookup(env), Os::Linux);
    apply_edits(env, changes);

    SECTION("nothing changed meanwhile: every byte comes back") {
        auto round = decode_hook_state(encode_hook_state(state));
        REQUIRE(round);
        apply_edits(env, undo_hook(*round, lookup(env), Os::Linux));
        CHECK(env == before);
    }
    SECTION("the user's PATH entry and CUDA_HOME stay; what cvm set goes") {
        env["PATH"] = "/mine:" + env["PATH"] + ":/last";
        env["CUDA_HOME"] = "mine";
        apply_edits(env, undo_hook(state, lookup(env), Os::Linux));
        CHECK(env["PATH"] == "/mine:/shims:/other/cuda-10.0/bin:/keep::/usr/bin:/last");
        CHECK(env["CUDA_HOME"] == "mine");
        CHECK(env["CUDA_PATH"] == "orig path");
        CHECK(env.count("CUDA_PATH_V12_4") == 0);
        CHECK(env.count("LD_LIBRARY_PATH") == 0);
        CHECK(env.count("CVM_ACTIVE") == 0);
    }
    SECTION("an entry before a removed one is gone: the removed one goes last") {
        env["PATH"] = "/tk/bin:/keep:/usr/bin";
        apply_edits(env, undo_hook(state, lookup(env), Os::Linux));
        CHECK(env["PATH"] == "/keep::/usr/bin:/other/cuda-10.0/bin");
    }
    SECTION("the user unset a variable cvm set: it stays unset") {
        env.erase("CUDA_PATH");
        apply_edits(env, undo_hook(state, lookup(env), Os::Linux));
        CHECK(env.count("CUDA_PATH") == 0);
    }
    SECTION("the user added to a list that was unset: the list keeps the addition") {
        env["LD_LIBRARY_PATH"] = "/mylib:/tk/lib64";
        apply_edits(env, undo_hook(state, lookup(env), Os::Linux));
        CHECK(env["LD_LIBRARY_PATH"] == "/mylib");
    }
}

TEST_CASE("a list entry the user also had is taken out once", "[hook]") {
    Env env = {{"PATH", "/a:/b"}};
    std::vector<EnvChange> changes = {{"PATH", "/a:/a:/b"}};
    auto state = record_hook("x", changes, lookup(env), Os::Linux);
    REQUIRE(state.vars.size() == 1);
    CHECK(state.vars[0].added == std::vector<std::string>{"/a"});
    CHECK(state.vars[0].removed.empty());
    apply_edits(env, changes);
    apply_edits(env, undo_hook(state, lookup(env), Os::Linux));
    CHECK(env["PATH"] == "/a:/b");
}

TEST_CASE("Windows lists are split on semicolons", "[hook]") {
    Env env = {{"PATH", "C:\\Windows;D:\\other\\CUDA\\v10.0\\bin"}};
    std::vector<EnvChange> changes = {{"PATH", "D:\\tk\\bin;C:\\Windows"}};
    auto state = record_hook("x", changes, lookup(env), Os::Windows);
    apply_edits(env, changes);
    env["PATH"] += ";E:\\mine";
    apply_edits(env, undo_hook(state, lookup(env), Os::Windows));
    CHECK(env["PATH"] == "C:\\Windows;D:\\other\\CUDA\\v10.0\\bin;E:\\mine");
}

TEST_CASE("leaving gives back a list's text byte for byte while it is as the hook left it",
          "[hook]") {
    Env env{{"PATH", ":/usr/bin::/bin:"}, {"LD_LIBRARY_PATH", ""}};
    std::vector<EnvChange> changes{{"PATH", std::string("/cuda/bin:/usr/bin:/bin")},
                                   {"LD_LIBRARY_PATH", std::string("/cuda/lib64")}};
    auto state = record_hook("12.4.1", changes, lookup(env), Os::Linux);
    auto text = encode_hook_state(state);
    auto back = decode_hook_state(text);
    REQUIRE(back);
    CHECK(encode_hook_state(*back) == text);
    Env entered = env;
    apply_edits(entered, changes);
    Env left = entered;
    apply_edits(left, undo_hook(*back, lookup(entered), Os::Linux));
    CHECK(left == env);
    // A record of an older cvm (no whole texts) still undoes entry by entry.
    std::string old_text = text.substr(0, text.find(",o,"));
    CHECK(decode_hook_state(old_text).has_value());
}
