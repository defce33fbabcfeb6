# shellcheck shell=bash
# What an operator checks after installing the `mcds` command, for the
# scripts that install it (scripts/check-cli-install.sh: into ~/.local;
# scripts/check-deb.sh: the Debian package). Source it from the repository
# root, with the installed mcds first on PATH.
#
#   check_completion   bash-completion's own loader, as an interactive shell
#                      uses it, completes `mcds lock run --no` to --nonblock
#   check_man          `man mcds-lock-run` and `man mcds` find and render
#                      the pages, with --nonblock and the EXIT STATUS

check_completion() {
  local completed
  completed=$(bash -c '
    source /usr/share/bash-completion/bash_completion
    _comp_load mcds 2>/dev/null || __load_completion mcds
    complete -p mcds >&2
    COMP_WORDS=(mcds lock run --no); COMP_CWORD=3
    COMP_LINE="mcds lock run --no"; COMP_POINT=${#COMP_LINE}
    "$(complete -p mcds | sed -n "s/.*-F \([^ ]*\).*/\1/p")" mcds --no run
    printf "%s\n" "${COMPREPLY[@]}"')
  echo "bash completes 'mcds lock run --no' to: $completed"
  [ "$completed" = "--nonblock" ] || { echo "completion failed" >&2; return 1; }
}

check_man() {
  local page
  page=$(MANWIDTH=80 MANPAGER=cat man mcds-lock-run 2>&1)
  echo "$page" | sed -n '1,4p'
  echo "$page" | grep -q -- '--nonblock' || { echo "man mcds-lock-run lacks --nonblock" >&2; return 1; }
  MANWIDTH=80 MANPAGER=cat man mcds | grep -q 'EXIT STATUS' || { echo "man mcds lacks its EXIT STATUS" >&2; return 1; }
}
