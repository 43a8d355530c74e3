# install.ps1 [-Destination FOLDER]: installs cvm from this unpacked zip for the current user, as
# install.cmd does: copies bin\ and share\ (default %LOCALAPPDATA%\Programs\cvm), puts the programs'
# folder and cvm's shims folder on the user's PATH in HKCU\Environment (kept as REG_EXPAND_SZ, never
# through setx), tells running programs that the environment changed, and runs `cvm rehash`.
param([string]$Destination = (Join-Path $env:LOCALAPPDATA 'Programs\cvm'))
$ErrorActionPreference = 'Stop'
$source = $PSScriptRoot
if (-not (Test-Path (Join-Path $source 'bin\cvm.exe'))) {
    Write-Error "cvm install: $source\bin\cvm.exe is missing; extract the whole zip, then run install.ps1 from it"
    exit 2
}
$bin = Join-Path $Destination 'bin'
New-Item -ItemType Directory -Force -Path $bin | Out-Null
Copy-Item -Force (Join-Path $source 'bin\*.exe') $bin
if (Test-Path (Join-Path $source 'share')) {
    Copy-Item -Recurse -Force (Join-Path $source 'share') $Destination
}
$store = if ($env:CVM_ROOT) { $env:CVM_ROOT } else { Join-Path $env:LOCALAPPDATA 'cvm' }
$shims = Join-Path $store 'shims'

$key = Get-Item -Path 'HKCU:\Environment'
$current = $key.GetValue('Path', '', 'DoNotExpandEnvironmentNames')
$parts = @($current -split ';' | Where-Object { $_ -ne '' })
foreach ($dir in @($bin, $shims)) {
    if (-not ($parts | Where-Object { $_.TrimEnd('\') -ieq $dir.TrimEnd('\') })) { $parts += $dir }
}
Set-ItemProperty -Path 'HKCU:\Environment' -Name 'Path' -Value ($parts -join ';') -Type ExpandString

# Explorer and new terminals pick up the change without a new logon.
Add-Type -Namespace CvmInstall -Name Native -MemberDefinition @'
[DllImport("user32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
public static extern System.IntPtr SendMessageTimeout(System.IntPtr hWnd, uint Msg, System.UIntPtr wParam,
    string lParam, uint fuFlags, uint uTimeout, out System.UIntPtr lpdwResult);
'@
$result = [UIntPtr]::Zero
[CvmInstall.Native]::SendMessageTimeout([IntPtr]0xffff, 0x1A, [UIntPtr]::Zero, 'Environment', 2, 5000, [ref]$result) | Out-Null

& (Join-Path $bin 'cvm.exe') rehash | Out-Null
Write-Output "cvm installed in $bin; $bin and $shims are on your PATH in new terminals."
Write-Output 'Next: open a new terminal and run `cvm list --available`.'
