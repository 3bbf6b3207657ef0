// `leasefs keygen [--key PATH]`: makes the key that signs the audit's heads.
// It never replaces a key: with one already there, it prints that key's
// verifier key and leaves it, so that an installer can run it every time.
#include <unistd.h>

#include <cstdio>

#include "daemon/cli.hpp"
#include "signing/ed25519_key.hpp"
#include "signing/key_file.hpp"
#include "signing/key_name.hpp"
#include "signing/verifier_key.hpp"

namespace leasefs::daemon {

int run_keygen(const std::string& path) {
  const std::string name = signing::machine_key_name();
  signing::LoadedKey existing = signing::load_key_file(path);
  if (existing.key) {
    std::fprintf(stderr, "leasefs keygen: a key is already at %s; it is kept. Its verifier key:\n",
                 path.c_str());
    std::printf("%s\n", signing::VerifierKey::of(name, existing.key->public_key()).text().c_str());
    return 0;
  }
  if (!existing.missing) {
    std::fprintf(stderr, "leasefs keygen: %s; it is not replaced\n", existing.why.c_str());
    return 1;
  }
  try {
    const signing::Ed25519Key key = signing::Ed25519Key::generate();
    if (auto why = signing::create_key_file(path, key, name)) {
      std::fprintf(stderr, "leasefs keygen: %s\n", why->c_str());
      return 1;
    }
    std::fprintf(stderr,
                 "leasefs keygen: made %s (root's alone) and %s.pub; the daemon signs each "
                 "turn's audit head with it. The verifier key, for `leasectl audit verify "
                 "--key`:\n",
                 path.c_str(), path.c_str());
    std::printf("%s\n", signing::VerifierKey::of(name, key.public_key()).text().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "leasefs keygen: %s\n", e.what());
    return 1;
  }
}

}  // namespace leasefs::daemon
