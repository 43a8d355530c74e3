@echo off
rem install.cmd [FOLDER]: installs cvm from this unpacked zip for the current user.
rem   Copies bin\ and share\ to FOLDER (default %LOCALAPPDATA%\Programs\cvm), puts FOLDER\bin and
rem   cvm's shims folder on the user's PATH through HKCU\Environment (never setx, which cuts PATH
rem   at 1024 characters), and runs `cvm rehash`. Running it again (a newer zip) upgrades in place:
rem   the shims keep working, as they start FOLDER\bin\cvm-shim.exe.
setlocal EnableExtensions
set "SRC=%~dp0"
set "DEST=%~1"
if "%DEST%"=="" set "DEST=%LOCALAPPDATA%\Programs\cvm"
if not exist "%SRC%bin\cvm.exe" (
    echo cvm install: %SRC%bin\cvm.exe is missing; extract the whole zip, then run install.cmd from it 1>&2
    exit /b 2
)
if not exist "%DEST%\bin" mkdir "%DEST%\bin"
if errorlevel 1 (
    echo cvm install: cannot create %DEST%\bin; choose a writable folder: install.cmd FOLDER 1>&2
    exit /b 1
)
copy /y "%SRC%bin\*.exe" "%DEST%\bin\" >nul
if errorlevel 1 (
    echo cvm install: cannot copy the programs to %DEST%\bin; close running cvm programs and try again 1>&2
    exit /b 1
)
if exist "%SRC%share" xcopy /e /i /y /q "%SRC%share" "%DEST%\share" >nul

set "STORE=%CVM_ROOT%"
if "%STORE%"=="" set "STORE=%LOCALAPPDATA%\cvm"
set "SHIMS=%STORE%\shims"

rem The user's own Path: cvm.exe appends what it lacks through the registry API (cmd's own tools
rem would expand %USERPROFILE% in it or cut it at 1024 characters).
"%DEST%\bin\cvm.exe" __add-user-path "%DEST%\bin" "%SHIMS%" >nul
if errorlevel 1 exit /b 1
"%DEST%\bin\cvm.exe" rehash >nul 2>&1
echo cvm installed in %DEST%\bin; %DEST%\bin and %SHIMS% are on your PATH in new terminals.
echo Next: open a new terminal and run `cvm list --available`.
exit /b 0
