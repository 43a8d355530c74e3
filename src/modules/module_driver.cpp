#include "modules/module_driver.h"

#include <sstream>

#include "modules/module_strings.h"

namespace cvm {

namespace {

// The messages, with DRIVER where the node's version goes.
std::string refuse_text(const std::string& name, const ModuleDriverFloors& f) {
    return name + " needs NVIDIA driver " + f.compat + " or newer (the oldest that runs CUDA " +
           std::to_string(f.major) + " through minor-version compatibility), but this node has DRIVER; "
           "ask for the driver to be updated, or load a cuda module of an older major";
}
std::string warn_text(const std::string& name, const std::string& version, const ModuleDriverFloors& f) {
    return name + ": this node's NVIDIA driver DRIVER is older than CUDA " + version + "'s " + f.release +
           "; programs run through minor-version compatibility (PTX of this toolkit cannot be JIT-compiled, "
           "and features that need the newer driver fail); update the driver to " + f.release + " or newer";
}

// Splits a message at DRIVER into the parts before and after.
std::pair<std::string, std::string> around_driver(const std::string& text) {
    auto at = text.find("DRIVER");
    return {text.substr(0, at), text.substr(at + 6)};
}

} // namespace

std::string driver_check_lua(const std::string& name, const std::string& version, const ModuleDriverFloors& f) {
    if (f.release.empty() && f.compat.empty()) return {};
    std::ostringstream out;
    out << "-- The node's NVIDIA driver against this toolkit's floors; nothing is said where none answers.\n"
           "local function cvm_driver_version()\n"
           "    local f = io.open(os.getenv(\"CVM_PROC_DRIVER_VERSION\") or \"/proc/driver/nvidia/version\", \"r\")\n"
           "    if f then\n"
           "        local text = f:read(\"*a\") or \"\"\n"
           "        f:close()\n"
           "        local rest = text:match(\"Kernel Module(.*)\")\n"
           "        local v = rest and rest:match(\"(%d+%.%d+[%.%d]*)\")\n"
           "        if v then return v end\n"
           "    end\n"
           "    -- Lmod's capture() runs a program (its sandbox has no io.popen).\n"
           "    local out = capture(\"nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null\")\n"
           "    local first = out and out:match(\"^[^\\n]*\")\n"
           "    local v = first and first:match(\"^%s*(%d+%.%d+[%.%d]*)%s*$\")\n"
           "    if v then return v end\n"
           "    return nil\n"
           "end\n"
           "local function cvm_older(a, b)\n"
           "    local x, y = {}, {}\n"
           "    for n in a:gmatch(\"%d+\") do x[#x + 1] = tonumber(n) end\n"
           "    for n in b:gmatch(\"%d+\") do y[#y + 1] = tonumber(n) end\n"
           "    for i = 1, math.max(#x, #y) do\n"
           "        local p, q = x[i] or 0, y[i] or 0\n"
           "        if p ~= q then return p < q end\n"
           "    end\n"
           "    return false\n"
           "end\n"
           "if mode() == \"load\" then\n"
           "    local driver = cvm_driver_version()\n";
    const char* branch = "if";
    if (!f.compat.empty()) {
        auto [a, b] = around_driver(refuse_text(name, f));
        out << "    " << branch << " driver and cvm_older(driver, " << lua_string(f.compat) << ") then\n"
            << "        LmodError(" << lua_string(a) << " .. driver .. " << lua_string(b) << ")\n";
        branch = "elseif";
    }
    if (!f.release.empty() && f.release != f.compat) {
        auto [a, b] = around_driver(warn_text(name, version, f));
        out << "    " << branch << " driver and cvm_older(driver, " << lua_string(f.release) << ") then\n"
            << "        LmodWarning(" << lua_string(a) << " .. driver .. " << lua_string(b) << ")\n";
    }
    out << "    end\n"
           "end\n";
    return out.str();
}

std::string driver_check_tcl(const std::string& name, const std::string& version, const ModuleDriverFloors& f) {
    if (f.release.empty() && f.compat.empty()) return {};
    std::ostringstream out;
    out << "# The node's NVIDIA driver against this toolkit's floors; nothing is said where none answers.\n"
           "proc cvm_driver_version {} {\n"
           "    set file /proc/driver/nvidia/version\n"
           "    if {[info exists ::env(CVM_PROC_DRIVER_VERSION)]} { set file $::env(CVM_PROC_DRIVER_VERSION) }\n"
           "    if {![catch {open $file r} f]} {\n"
           "        set text [read $f]\n"
           "        close $f\n"
           "        if {[regexp {Kernel Module(.*)} $text -> rest] &&\n"
           "            [regexp {([0-9]+\\.[0-9]+(\\.[0-9]+)*)} $rest -> v]} { return $v }\n"
           "    }\n"
           "    if {![catch {exec nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null} out]} {\n"
           "        set line [lindex [split $out \"\\n\"] 0]\n"
           "        if {[regexp {^\\s*([0-9]+\\.[0-9]+(\\.[0-9]+)*)\\s*$} $line -> v]} { return $v }\n"
           "    }\n"
           "    return \"\"\n"
           "}\n"
           "proc cvm_older {a b} {\n"
           "    set x [split $a .]\n"
           "    set y [split $b .]\n"
           "    set n [expr {max([llength $x], [llength $y])}]\n"
           "    for {set i 0} {$i < $n} {incr i} {\n"
           "        set p 0\n"
           "        set q 0\n"
           "        scan [lindex $x $i] %d p\n"
           "        scan [lindex $y $i] %d q\n"
           "        if {$p != $q} { return [expr {$p < $q}] }\n"
           "    }\n"
           "    return 0\n"
           "}\n"
           "if {[module-info mode load]} {\n"
           "    set cvm_driver [cvm_driver_version]\n";
    const char* branch = "if";
    if (!f.compat.empty()) {
        auto [a, b] = around_driver(refuse_text(name, f));
        out << "    " << branch << " {$cvm_driver ne \"\" && [cvm_older $cvm_driver " << tcl_string(f.compat) << "]} {\n"
            << "        error [join [list " << tcl_string(a) << " $cvm_driver " << tcl_string(b) << "] \"\"]\n";
        branch = "} elseif";
    }
    if (!f.release.empty() && f.release != f.compat) {
        auto [a, b] = around_driver(warn_text(name, version, f));
        out << "    " << branch << " {$cvm_driver ne \"\" && [cvm_older $cvm_driver " << tcl_string(f.release) << "]} {\n"
            << "        puts stderr [join [list \"WARNING: \" " << tcl_string(a) << " $cvm_driver " << tcl_string(b) << "] \"\"]\n";
    }
    out << "    }\n"
           "}\n";
    return out.str();
}

} // namespace cvm
