# install.ps1 [-Destination FOLDER]: installs cvm from this unpacked zip for the current user, as
# install.cmd does: copies bin\ and share\ (default %LOCALAPPDATA%\Programs\cvm), puts the programs'
# folder and cvm's shims folder on the user's PATH in HKCU\Environment and runs `cvm rehash`.
# The PATH edit is cvm.exe's own (`cvm __add-user-path`, the code install.cmd runs): it reads the
# value unexpanded, keeps it REG_EXPAND_SZ, never goes through setx, and tells running programs.
param([string]$Destination = (Join-Path $env:LOCALAPPDATA 'Programs\cvm'))
$ErrorActionPreference = 'Stop'
$source = $PSScriptRoot
if (-not (Test-Path -LiteralPath (Join-Path $source 'bin\cvm.exe'))) {
    [Console]::Error.WriteLine("cvm install: $source\bin\cvm.exe is missing; extract the whole zip, then run install.ps1 from it")
    exit 2
}
$bin = Join-Path $Destination 'bin'
try {
    New-Item -ItemType Directory -Force -Path $bin | Out-Null
} catch {
    [Console]::Error.WriteLine("cvm install: cannot create $bin; choose a writable folder: install.ps1 -Destination FOLDER")
    exit 1
}
try {
    Copy-Item -Force -Path (Join-Path $source 'bin\*.exe') -Destination $bin
    if (Test-Path -LiteralPath (Join-Path $source 'share')) {
        Copy-Item -Recurse -Force -LiteralPath (Join-Path $source 'share') -Destination $Destination
    }
} catch {
    [Console]::Error.WriteLine("cvm install: cannot copy the programs to $bin; close running cvm programs and try again")
    exit 1
}
$store = if ($env:CVM_ROOT) { $env:CVM_ROOT } else { Join-Path $env:LOCALAPPDATA 'cvm' }
$shims = Join-Path $store 'shims'
$cvm = Join-Path $bin 'cvm.exe'

& $cvm __add-user-path $bin $shims | Out-Null
if ($LASTEXITCODE -ne 0) { exit 1 }
& $cvm rehash | Out-Null
Write-Output "cvm installed in $bin; $bin and $shims are on your PATH in new terminals."
Write-Output 'Next: open a new terminal and run `cvm list --available`.'
exit 0
