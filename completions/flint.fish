# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_flint_global_optspecs
    string join \n h/help V/version
end

function __fish_flint_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_flint_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_flint_using_subcommand
    set -l cmd (__fish_flint_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c flint -n "__fish_flint_needs_command" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_needs_command" -s V -l version -d 'Print version'
complete -c flint -n "__fish_flint_needs_command" -f -a "plan" -d 'Show what provisioning with a config would change, without changing anything'
complete -c flint -n "__fish_flint_needs_command" -f -a "apply" -d 'Provision the machine from a config (disks, filesystems, files, users, units)'
complete -c flint -n "__fish_flint_needs_command" -f -a "rmcfg" -d 'Delete the config from the hypervisor after the first boot (vmware, virtualbox), as upstream\'s ignition-rmcfg'
complete -c flint -n "__fish_flint_needs_command" -f -a "translate" -d 'Translate a Butane config into an Ignition config (the same as `butane`)'
complete -c flint -n "__fish_flint_needs_command" -f -a "validate" -d 'Check Ignition and Butane configs (files or directories), many at once'
complete -c flint -n "__fish_flint_needs_command" -f -a "migrate" -d 'Print the Butane config (variant flatcar) equivalent to an Ignition config of any version, spec 1 and 2.x included'
complete -c flint -n "__fish_flint_needs_command" -f -a "schema" -d 'Print a JSON Schema for editors'
complete -c flint -n "__fish_flint_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish or powershell)'
complete -c flint -n "__fish_flint_needs_command" -f -a "man" -d 'Print the manual page (roff), or write one per command into a directory'
complete -c flint -n "__fish_flint_needs_command" -f -a "lsp" -d 'Serve the Language Server Protocol over standard input and output, for editors: diagnostics, hover, completion and code actions for Butane and Ignition configs'
complete -c flint -n "__fish_flint_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c flint -n "__fish_flint_using_subcommand plan" -l root -d 'The mounted target root' -r -F
complete -c flint -n "__fish_flint_using_subcommand plan" -l config-source -d 'Where the config comes from: `auto` is the platform the kernel command line names (ignition.platform.id=, else flatcar.oem.id=, else qemu on QEMU/KVM, else metal)' -r
complete -c flint -n "__fish_flint_using_subcommand plan" -l platform -d 'Get the config from this platform (aws, azure, gcp, openstack, vmware, …; `flint rmcfg --help` lists them): the kernel command line, then user.ign in the system config directories, then the platform' -r
complete -c flint -n "__fish_flint_using_subcommand plan" -l fetch-timeout -d 'How long the platform may take to hand over the config, in seconds' -r
complete -c flint -n "__fish_flint_using_subcommand plan" -l base-dir -d 'Base configs (*.ign, in name order) merged underneath the user config' -r -F
complete -c flint -n "__fish_flint_using_subcommand plan" -l config-cache -d 'Keep the rendered config here, so that separate stage runs read the same config' -r -F
complete -c flint -n "__fish_flint_using_subcommand plan" -l kargs-file -d 'The grub.cfg that holds the kernel arguments; without it, grub.cfg on the OEM partition (the filesystem labelled OEM), mounted for the edit' -r -F
complete -c flint -n "__fish_flint_using_subcommand plan" -l kargs-reboot-flag -d 'Created when the kargs stage changed the kernel arguments: the machine must reboot before they hold (the initramfs does)' -r -F
complete -c flint -n "__fish_flint_using_subcommand plan" -l neednet -d 'The flag file `--stage fetch-offline` creates when the config needs the network' -r -F
complete -c flint -n "__fish_flint_using_subcommand plan" -l state-dir -d 'Run state kept between the stages of one boot (generated LUKS keys)' -r -F
complete -c flint -n "__fish_flint_using_subcommand plan" -l stage -d 'Run only this stage' -r -f -a "fetch-offline\t''
fetch\t''
kargs\t''
disks\t''
mount\t''
files\t''
umount\t''"
complete -c flint -n "__fish_flint_using_subcommand plan" -l format -d 'Output format' -r -f -a "human\t''
json\t''"
complete -c flint -n "__fish_flint_using_subcommand plan" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand apply" -l root -d 'The mounted target root' -r -F
complete -c flint -n "__fish_flint_using_subcommand apply" -l config-source -d 'Where the config comes from: `auto` is the platform the kernel command line names (ignition.platform.id=, else flatcar.oem.id=, else qemu on QEMU/KVM, else metal)' -r
complete -c flint -n "__fish_flint_using_subcommand apply" -l platform -d 'Get the config from this platform (aws, azure, gcp, openstack, vmware, …; `flint rmcfg --help` lists them): the kernel command line, then user.ign in the system config directories, then the platform' -r
complete -c flint -n "__fish_flint_using_subcommand apply" -l fetch-timeout -d 'How long the platform may take to hand over the config, in seconds' -r
complete -c flint -n "__fish_flint_using_subcommand apply" -l base-dir -d 'Base configs (*.ign, in name order) merged underneath the user config' -r -F
complete -c flint -n "__fish_flint_using_subcommand apply" -l config-cache -d 'Keep the rendered config here, so that separate stage runs read the same config' -r -F
complete -c flint -n "__fish_flint_using_subcommand apply" -l kargs-file -d 'The grub.cfg that holds the kernel arguments; without it, grub.cfg on the OEM partition (the filesystem labelled OEM), mounted for the edit' -r -F
complete -c flint -n "__fish_flint_using_subcommand apply" -l kargs-reboot-flag -d 'Created when the kargs stage changed the kernel arguments: the machine must reboot before they hold (the initramfs does)' -r -F
complete -c flint -n "__fish_flint_using_subcommand apply" -l neednet -d 'The flag file `--stage fetch-offline` creates when the config needs the network' -r -F
complete -c flint -n "__fish_flint_using_subcommand apply" -l state-dir -d 'Run state kept between the stages of one boot (generated LUKS keys)' -r -F
complete -c flint -n "__fish_flint_using_subcommand apply" -l stage -d 'Run only this stage' -r -f -a "fetch-offline\t''
fetch\t''
kargs\t''
disks\t''
mount\t''
files\t''
umount\t''"
complete -c flint -n "__fish_flint_using_subcommand apply" -l format -d 'Output format' -r -f -a "human\t''
json\t''"
complete -c flint -n "__fish_flint_using_subcommand apply" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand rmcfg" -l platform -d 'The platform (vmware or virtualbox keep the config where the guest can read it); without it, the platform the kernel command line names' -r
complete -c flint -n "__fish_flint_using_subcommand rmcfg" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand translate" -s d -l files-dir -d 'Allow embedding local files from this directory' -r -F
complete -c flint -n "__fish_flint_using_subcommand translate" -s o -l output -d 'Write the output to FILE instead of stdout' -r -F
complete -c flint -n "__fish_flint_using_subcommand translate" -l color -d 'Colour diagnostics: auto, always or never' -r
complete -c flint -n "__fish_flint_using_subcommand translate" -l input -d 'Read the config from FILE (deprecated: give the file as the argument)' -r -F
complete -c flint -n "__fish_flint_using_subcommand translate" -s s -l strict -d 'Fail on any warning'
complete -c flint -n "__fish_flint_using_subcommand translate" -s p -l pretty -d 'Output formatted JSON'
complete -c flint -n "__fish_flint_using_subcommand translate" -s r -l raw -d 'Never wrap in a MachineConfig; force Ignition output'
complete -c flint -n "__fish_flint_using_subcommand translate" -l raw-errors -d 'Print errors and warnings as one line each'
complete -c flint -n "__fish_flint_using_subcommand translate" -s c -l check -d 'Check the config without producing output'
complete -c flint -n "__fish_flint_using_subcommand translate" -s D -l debug -d 'Print where each part of the output came from'
complete -c flint -n "__fish_flint_using_subcommand translate" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand validate" -l format -d 'Output format' -r -f -a "human\t'The upstream validator\'s lines (prefixed with the file when there are several)'
json\t'One JSON object per diagnostic and line'
sarif\t'One SARIF 2.1.0 log (for GitHub code scanning and other static-analysis viewers)'
github\t'GitHub Actions workflow commands (`::error file=…,line=…,col=…::…`): annotations'"
complete -c flint -n "__fish_flint_using_subcommand validate" -l color -d 'Colour human output and show the source around each problem, as Butane does' -r -f -a "auto\t'When standard output is a terminal and NO_COLOR is not set'
always\t'Always'
never\t'Never: the upstream validator\'s plain lines'"
complete -c flint -n "__fish_flint_using_subcommand validate" -l rules -d 'Whose rules Ignition configs are validated by' -r -f -a "flatcar\t'Flatcar\'s ignition-validate: upstream\'s rules, and `oem://` sources are accepted'
upstream\t'Upstream\'s ignition-validate exactly: `oem://` is an invalid url scheme'"
complete -c flint -n "__fish_flint_using_subcommand validate" -s d -l files-dir -d 'The files directory for Butane `local` references (default: a `files` directory beside each config, when there is one)' -r -F
complete -c flint -n "__fish_flint_using_subcommand validate" -s s -l strict -d 'Treat warnings as failures'
complete -c flint -n "__fish_flint_using_subcommand validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c flint -n "__fish_flint_using_subcommand migrate" -s o -l output -d 'Write the Butane config here instead of standard output' -r -F
complete -c flint -n "__fish_flint_using_subcommand migrate" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand schema" -l list -d 'List the schema names'
complete -c flint -n "__fish_flint_using_subcommand schema" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand completions" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand man" -l dir -d 'Write flint.1 and one page per subcommand (flint-validate.1, ...) into DIR instead of printing flint.1' -r -F
complete -c flint -n "__fish_flint_using_subcommand man" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand lsp" -s h -l help -d 'Print help'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "plan" -d 'Show what provisioning with a config would change, without changing anything'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "apply" -d 'Provision the machine from a config (disks, filesystems, files, users, units)'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "rmcfg" -d 'Delete the config from the hypervisor after the first boot (vmware, virtualbox), as upstream\'s ignition-rmcfg'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "translate" -d 'Translate a Butane config into an Ignition config (the same as `butane`)'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "validate" -d 'Check Ignition and Butane configs (files or directories), many at once'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "migrate" -d 'Print the Butane config (variant flatcar) equivalent to an Ignition config of any version, spec 1 and 2.x included'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "schema" -d 'Print a JSON Schema for editors'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish or powershell)'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "man" -d 'Print the manual page (roff), or write one per command into a directory'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "lsp" -d 'Serve the Language Server Protocol over standard input and output, for editors: diagnostics, hover, completion and code actions for Butane and Ignition configs'
complete -c flint -n "__fish_flint_using_subcommand help; and not __fish_seen_subcommand_from plan apply rmcfg translate validate migrate schema completions man lsp help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
