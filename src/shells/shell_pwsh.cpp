// PowerShell: activation, deactivation, scripts and the profile code. Its table:
// shells/shell_syntax.h.
#include <algorithm>

#include "shells/shell_common.h"
#include "shells/shell_syntax.h"

namespace cvm::shell_detail {

using platform::Os;

namespace {

const char* const kPwshDeactivate = R"PS(function global:cvm_deactivate {
    # Restores what the variables held before cvm activated anything (see _CVM_SAVED);
    # with -NonDestructive the function stays defined.
    param([switch]$NonDestructive)
    foreach ($n in ([string]$env:_CVM_SAVED).Split(' ')) {
        if ($n -cnotmatch '^[A-Za-z_][A-Za-z0-9_]*$') { continue }
        [Environment]::SetEnvironmentVariable($n, [Environment]::GetEnvironmentVariable("_CVM_OLD_$n"))
        [Environment]::SetEnvironmentVariable("_CVM_OLD_$n", $null)
    }
    [Environment]::SetEnvironmentVariable('_CVM_SAVED', $null)
    if (-not $NonDestructive) { Remove-Item -LiteralPath Function:\cvm_deactivate -ErrorAction SilentlyContinue }
}
)PS";

void pwsh_save_and_set(std::string& out, const std::vector<EnvChange>& changes,
                       const std::vector<std::string>& skip) {
    auto names = names_of(changes);
    out += "cvm_deactivate -NonDestructive\n";
    std::string list;
    for (const auto& n : names)
        list += std::string(list.empty() ? "" : ", ") + "'" + n + "'";
    out += "foreach ($_cvm_n in @(" + list + ")) {\n";
    out += "    $_cvm_v = [Environment]::GetEnvironmentVariable($_cvm_n)\n";
    out +=
        "    if ($null -ne $_cvm_v) { [Environment]::SetEnvironmentVariable(\"_CVM_OLD_$_cvm_n\", "
        "$_cvm_v) }\n";
    out += "}\n";
    out += "$env:_CVM_SAVED = " + quote_pwsh(join(names, " ")) + "\n";
    for (const auto& c : changes) {
        if (std::find(skip.begin(), skip.end(), c.name) != skip.end()) continue;
        if (c.value) {
            check_value(Shell::Pwsh, c.name, *c.value);
            out += "$env:" + c.name + " = " + quote_pwsh(*c.value) + "\n";
        } else {
            out += "$env:" + c.name + " = $null\n";
        }
    }
    out += "Remove-Variable -Name _cvm_n, _cvm_v -ErrorAction SilentlyContinue\n";
}

std::string pwsh_array(const std::vector<std::string>& items) {
    std::string out = "@(";
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? ", " : "") + quote_pwsh(items[i]);
    return out + ")";
}

std::string pwsh_script(const ActivationScript& s) {
    const Os os = s.os;
    const bool win = os == Os::Windows;
    std::string name = s.file_name.empty() ? std::string("activate.ps1") : s.file_name;
    std::string out;
    out += "# cvm activation script for CUDA " + s.active + ", written by `cvm script`.\n";
    out += "# It needs no cvm to run. In PowerShell:\n";
    out += "#   . ./" + name + "               activates it in this session\n";
    out += "#   . ./" + name + " deactivate    (or cvm_deactivate) restores what was there\n";
    out += "param([string]$Action)\n";
    out += kPwshDeactivate;
    out += "if ($Action -eq 'deactivate') { cvm_deactivate; return }\n";
    out += "if ($Action) { Write-Error \"" + name +
           ": unknown argument '$Action'; use deactivate\"; return }\n";
    std::vector<std::string> firsts, layers;
    for (const auto* list : {&s.bin_dirs, &s.lib_dirs, &s.include_dirs})
        for (const auto& d : *list)
            firsts.push_back(normalized_dir(d, os));
    for (const auto& l : s.store_layers)
        layers.push_back(normalized_dir(l, os));
    const std::string eq = win ? "-ieq" : "-ceq";
    const std::string cmp = win ? "OrdinalIgnoreCase" : "Ordinal";
    const std::string sep = win ? "\\" : "/";
    out += "$_cvm_first = " + pwsh_array(firsts) + "\n";
    out += "$_cvm_layers = " + pwsh_array(layers) + "\n";
    out += "$_cvm_shims = " + quote_pwsh(normalized_dir(s.shims_dir, os)) + "\n";
    out += "function _cvm_keep([string]$e, [int]$kind) {\n";
    out += "    # False for another CUDA toolkit's or cuDNN build's folder ($kind: 0 programs, 1\n";
    out += "    # libraries, 2 headers).\n";
    out += "    if ($e -eq '') { return $false }\n";
    if (win) {
        out += "    $n = $e.Replace('/', '\\')\n";
        out += "    while ($n.Length -gt 3 -and $n.EndsWith('\\')) { $n = $n.Substring(0, "
               "$n.Length - 1) }\n";
    } else {
        out += "    $n = $e\n";
        out += "    while ($n.Length -gt 1 -and $n.EndsWith('/')) { $n = $n.Substring(0, $n.Length "
               "- 1) }\n";
    }
    out += "    foreach ($f in $_cvm_first) { if ($n " + eq + " $f) { return $false } }\n";
    out += "    if ($_cvm_shims -ne '' -and $n " + eq + " $_cvm_shims) { return $true }\n";
    out += "    foreach ($l in $_cvm_layers) {\n";
    out += "        if ($n " + eq + " $l -or $n.StartsWith($l + '" + sep +
           "', [StringComparison]::" + cmp + ")) { return $false }\n";
    out += "    }\n";
    if (win) {
        out += "    if ($n -imatch '^.:\\\\windows') { return $true }\n";
        out += "    if ($n.IndexOf('\\nvidia gpu computing toolkit\\cuda\\', "
               "[StringComparison]::OrdinalIgnoreCase) -ge 0) { return $false }\n";
        out += "    foreach ($f in @(";
        for (size_t i = 0; i < windows_cuda_bin_probes().size(); ++i)
            out += std::string(i ? ", " : "") + "'" + windows_cuda_bin_probes()[i] + "'";
        out += ")) { if (Test-Path -LiteralPath (Join-Path $e $f)) { return $false } }\n";
    } else {
        out += "    if (@(";
        for (size_t i = 0; i < linux_system_dirs().size(); ++i)
            out += std::string(i ? ", " : "") + "'" + linux_system_dirs()[i] + "'";
        out += ") -ccontains $n) { return $true }\n";
        out += "    if ($n -cmatch '^/(usr/)?(lib|include)/.*-linux-gnu[^/]*$') { return $true }\n";
        out += "    if ($kind -eq 1) {\n";
        out += "        foreach ($f in @(";
        for (size_t i = 0; i < linux_cuda_library_probes().size(); ++i)
            out += std::string(i ? ", " : "") + "'" + linux_cuda_library_probes()[i] + "'";
        out += ")) { if (Test-Path -LiteralPath (Join-Path $e $f)) { return $false } }\n";
        out += "        if ($n.EndsWith('/stubs') -and (Test-Path -LiteralPath (Join-Path $e "
               "'libcuda.so'))) { "
               "return $false }\n";
        out += "        if ($n -cmatch '/cuda(-[0-9][^/]*)?/(lib64|targets/[^/]+/lib)$') { return "
               "$false }\n";
        out += "    } elseif ($kind -eq 2) {\n";
        out += "        foreach ($f in @(";
        for (size_t i = 0; i < cuda_header_probes().size(); ++i)
            out += std::string(i ? ", " : "") + "'" + cuda_header_probes()[i] + "'";
        out += ")) { if (Test-Path -LiteralPath (Join-Path $e $f)) { return $false } }\n";
        out += "        if ($n -cmatch '/cuda(-[0-9][^/]*)?/(include|targets/[^/]+/include)$') { "
               "return "
               "$false }\n";
        out += "    } else {\n";
        out += "        if (Test-Path -LiteralPath (Join-Path $e 'nvcc')) { return $false }\n";
        out += "        if ($n -cmatch '/cuda(-[0-9][^/]*)?/bin$') { return $false }\n";
        out += "    }\n";
    }
    out += "    return $true\n";
    out += "}\n";
    auto lists = script_lists(s.changes);
    std::vector<std::string> skip;
    for (const auto& l : lists)
        skip.push_back(l.first);
    pwsh_save_and_set(out, s.changes, skip);
    const std::string list_sep = win ? ";" : ":";
    for (const auto& [var, kind] : lists) {
        out += "$_cvm_r = [System.Collections.Generic.List[string]]::new()\n";
        for (const auto& f : script_firsts(s, var))
            out += "$_cvm_r.Add(" + quote_pwsh(f) + ")\n";
        out += "if ($null -ne $env:" + var + ") { foreach ($_cvm_d in $env:" + var + ".Split('" +
               list_sep + "')) { if (_cvm_keep $_cvm_d " + std::to_string(kind) +
               ") { $_cvm_r.Add($_cvm_d) } } }\n";
        // An empty CPATH element would mean the current folder to gcc.
        out += "if ($_cvm_r.Count -gt 0) { $env:" + var + " = $_cvm_r -join '" + list_sep +
               "' } else { $env:" + var + " = $null }\n";
    }
    out += "Remove-Item -LiteralPath Function:\\_cvm_keep -ErrorAction SilentlyContinue\n";
    out += "Remove-Variable -Name _cvm_first, _cvm_layers, _cvm_shims, _cvm_r, _cvm_d "
           "-ErrorAction SilentlyContinue\n";
    return out;
}

std::string pwsh_path_first(const std::string& shims, Os os) {
    std::string sep = os == Os::Windows ? ";" : ":";
    std::string out;
    out += "$_cvm_shims = " + quote_pwsh(shims) + "\n";
    out += "$env:PATH = (@($_cvm_shims) + @(([string]$env:PATH).Split('" + sep +
           "') | Where-Object { $_ -ne '' -and $_ -ne $_cvm_shims })) -join '" + sep + "'\n";
    out += "Remove-Variable -Name _cvm_shims\n";
    return out;
}

std::string pwsh_env(const std::vector<EnvChange>& changes) {
    std::string out = kPwshDeactivate;
    pwsh_save_and_set(out, changes, {});
    return out;
}

std::string pwsh_deactivate() {
    return std::string(kPwshDeactivate) + "cvm_deactivate\n";
}

std::string pwsh_assign(const std::vector<EnvChange>& changes) {
    std::string out;
    for (const auto& c : changes) {
        if (c.value) {
            check_value(Shell::Pwsh, c.name, *c.value);
            out += "$env:" + c.name + " = " + quote_pwsh(*c.value) + "\n";
        } else {
            out += "$env:" + c.name + " = $null\n";
        }
    }
    return out;
}

std::string pwsh_init(const InitOptions& o) {
    std::string out = init_header(o.hook);
    out += pwsh_path_first(o.shims_dir, o.os);
    std::string exe =
        o.exe.empty()
            ? std::string("(Get-Command -CommandType Application -Name cvm -TotalCount 1)")
            : quote_pwsh(o.exe);
    out += "$global:_cvm_exe = " + exe + "\n";
    out += R"PS(function global:cvm {
    # `cvm shell` and `cvm deactivate` print code for this shell; the function runs it.
    $help = ($args -contains '-h') -or ($args -contains '--help') -or ($args -contains '--help-all')
    if ($args.Count -gt 0 -and @('shell', 'deactivate') -contains $args[0] -and -not $help) {
        $code = & $global:_cvm_exe @args --shell pwsh)PS";
    // With the hook, cvm is told whether it is on, to say what the function then does to it.
    if (o.hook) out += R"PS( --prompt-hook $(if ($global:_cvm_off) { 'off' } else { 'on' }))PS";
    out += R"PS(
        if ($LASTEXITCODE -ne 0) { return }
        ($code | Out-String) | Invoke-Expression
)PS";
    if (o.hook)
        out +=
            R"PS(        if ($args[0] -eq 'deactivate') { $global:_cvm_off = $true } else { $global:_cvm_off = $null; $global:_cvm_key = $null; _cvm_hook }
)PS";
    out += R"PS(    } else {
        & $global:_cvm_exe @args
    }
}
)PS";
    if (!o.hook) return out;
    std::string watched;
    for (const auto& f : o.watched)
        watched += ", " + quote_pwsh(f);
    out += "$global:_cvm_stamp = Join-Path " + quote_pwsh(o.stamp_dir) + " $PID\n";
    out += R"PS(function global:_cvm_hook {
    # The prompt hook (cvm init): applies the selection of this folder when it changed. Cheap
    # when nothing did: a test per folder up to the nearest .cudaversion, and a few more.
    # Off after `cvm deactivate`, until `cvm shell` (or `cvm init` again).
    if ($global:_cvm_off) { return }
    $here = $ExecutionContext.SessionState.Path.CurrentFileSystemLocation.ProviderPath
    $d = $here
    $f = $null
    while ($d) {
        $c = Join-Path $d '.cudaversion'
        if (Test-Path -LiteralPath $c) { $f = $c; break }
        $d = Split-Path -Parent $d
    }
    $k = "$here|$env:CVM_VERSION|$($null -ne $env:_CVM_SAVED)|$f"
    if (-not $f) { $f = )PS" +
           quote_pwsh(o.global_file) + R"PS( }
    if ($k -ceq $global:_cvm_key -and (Test-Path -LiteralPath $global:_cvm_stamp)) {
        $s = (Get-Item -LiteralPath $global:_cvm_stamp -Force).LastWriteTimeUtc
        $fresh = $true
        foreach ($x in @($f)PS" +
           watched + R"PS()) {
            if ((Test-Path -LiteralPath $x) -and (Get-Item -LiteralPath $x -Force).LastWriteTimeUtc -ge $s) { $fresh = $false }
        }
        if ($fresh) { return }
    }
    $global:_cvm_key = $k
    $exit = $global:LASTEXITCODE
    $code = & $global:_cvm_exe hook-env --shell pwsh --pid $PID
    if ($LASTEXITCODE -eq 0 -and $code) { ($code | Out-String) | Invoke-Expression }
    $global:LASTEXITCODE = $exit
}
$global:_cvm_off = $null
if (-not $global:_cvm_prompt) {
    $global:_cvm_prompt = $function:prompt
    function global:prompt { _cvm_hook; & $global:_cvm_prompt }
}
_cvm_hook
)PS";
    return out;
}

} // namespace

const ShellSyntax kPwshSyntax = {Shell::Pwsh, "pwsh",   "powershell",    ".ps1",
                                 quote_pwsh,  pwsh_env, pwsh_deactivate, pwsh_script,
                                 pwsh_assign, pwsh_init};

} // namespace cvm::shell_detail
