# Installing Debian packages for the .ci service scripts (sourced by them, not run): as root,
# or through sudo. The package lists of a fresh machine may be missing or stale, so they are
# updated first. Everything goes to stderr: the scripts print only their URL or path.
apt_install() {
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2
}
