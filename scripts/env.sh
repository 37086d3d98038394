# Sourced by heapwire's scripts: puts the project's Python virtual environment (.venv,
# made by scripts/setup.sh from the pinned requirements.txt) first on PATH, so every
# `python3` they run — and every one the tests they start run — is the venv's.
HEAPWIRE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -x "$HEAPWIRE_ROOT/.venv/bin/python3" ]; then
  export VIRTUAL_ENV="$HEAPWIRE_ROOT/.venv"
  case ":$PATH:" in
    *":$VIRTUAL_ENV/bin:"*) ;;
    *) export PATH="$VIRTUAL_ENV/bin:$PATH" ;;
  esac
fi

# The hand-written files of a core (rtl/<core>.f: names in rtl/, `//` comment lines, blank
# lines), each prefixed with directory $2, space-separated.
core_files() { sed -e '/^[[:space:]]*\/\//d' -e '/^[[:space:]]*$/d' -e "s|^|$2/|" "$HEAPWIRE_ROOT/rtl/$1.f" | tr '\n' ' '; }
