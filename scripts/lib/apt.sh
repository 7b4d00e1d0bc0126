# Sourced by the setup scripts: apt_install_missing WHO PKG... installs the PKGs dpkg does not
# list as installed (as root; otherwise it names them and fails), so a second run changes
# nothing. WHO names the calling script in messages. APT_DEBCONF, when set, is fed to
# debconf-set-selections before installing (answers a package's install-time question).
apt_install_missing() {
  local who=$1 p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$who: missing packages: ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
  echo "$who: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if [ -n "${APT_DEBCONF:-}" ]; then
    echo "$APT_DEBCONF" | debconf-set-selections
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
