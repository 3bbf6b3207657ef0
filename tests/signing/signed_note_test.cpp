// Ed25519 through EVP, the signed-note key ID and verifier key, and checkpoint
// notes, against vectors fixed outside this code: RFC 8032's first test vector,
// a key ID worked out by hand from the signed-note spec's formula (SHA-256 of
// "example.com/log", 0x0A, 0x01 and the RFC's public key: cc714670), and the
// verifier key of Go's golang.org/x/mod/sumdb/note documentation.
#include "signing/signed_note.hpp"

#include <gtest/gtest.h>

#include <string>

#include "signing/base64.hpp"
#include "signing/ed25519_key.hpp"
#include "signing/tree_head.hpp"
#include "signing/verifier_key.hpp"

namespace leasefs::signing {
namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// RFC 8032, section 7.1, TEST 1.
const std::string kSeed = unhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const std::string kPublic =
    unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const std::string kEmptySignature = unhex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9"
    "b46bd25bf5f0595bbe24655141438e7a100b");

std::string bytes_0_to_31() {
  std::string out;
  for (int i = 0; i < 32; ++i) out += static_cast<char>(i);
  return out;
}

TEST(Ed25519, SignsAsRfc8032Says) {
  const Ed25519Key key = Ed25519Key::from_seed(kSeed);
  EXPECT_EQ(key.public_key(), kPublic);
  EXPECT_EQ(key.sign(""), kEmptySignature);
  EXPECT_TRUE(ed25519_verify(kPublic, "", kEmptySignature));
  std::string bad = kEmptySignature;
  bad[10] ^= 1;
  EXPECT_FALSE(ed25519_verify(kPublic, "", bad));
  EXPECT_FALSE(ed25519_verify(kPublic, "x", kEmptySignature));
}

TEST(Ed25519, PemRoundTrip) {
  const Ed25519Key key = Ed25519Key::generate();
  const std::string pem = key.pem();
  EXPECT_NE(pem.find("BEGIN PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(Ed25519Key::from_pem(pem).public_key(), key.public_key());
  EXPECT_THROW(Ed25519Key::from_pem("not a key"), std::runtime_error);
}

TEST(VerifierKey, KeyIdFollowsTheSignedNoteSpec) {
  EXPECT_EQ(ed25519_key_id("example.com/log", kPublic), 0xcc714670u);
  const VerifierKey key = VerifierKey::of("example.com/log", kPublic);
  EXPECT_EQ(key.text(), "example.com/log+cc714670+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea");
  std::string why;
  const auto back = parse_verifier_key(key.text() + "\n", &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->name, "example.com/log");
  EXPECT_EQ(back->public_key, kPublic);
  EXPECT_EQ(back->id, 0xcc714670u);
}

TEST(VerifierKey, ParsesGoNotesDocumentedKey) {
  std::string why;
  const auto key = parse_verifier_key(
      "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", &why);
  ASSERT_TRUE(key) << why;
  EXPECT_EQ(key->id, 0xc74f20a3u);
}

TEST(VerifierKey, RefusesWhatIsNotOne) {
  std::string why;
  for (const char* text :
       {"", "abc", "a+b", "a b+cc714670+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea",
        "example.com/log+cc714671+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea",
        "example.com/log+CC714670+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea",
        "example.com/log+cc714670+AtdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea",
        "example.com/log+cc714670+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Eb"}) {
    EXPECT_FALSE(parse_verifier_key(text, &why)) << text;
    EXPECT_FALSE(why.empty()) << text;
  }
}

TEST(Base64, OnlyTheCanonicalSpelling) {
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  EXPECT_EQ(base64_decode("YWI="), "ab");
  // "YWJ=" decodes to the same bytes through bits that padding leaves unused.
  EXPECT_FALSE(base64_decode("YWJ="));
  EXPECT_FALSE(base64_decode("YWI"));
  EXPECT_FALSE(base64_decode("YW I"));
  EXPECT_FALSE(base64_decode(""));
}

// The whole note, byte for byte, as an independent Ed25519 implementation
// (Python's cryptography package) wrote it for the same seed and text.
TEST(SignedNote, CheckpointMatchesAFixedVector) {
  const Ed25519Key key = Ed25519Key::from_seed(kSeed);
  const std::string text = tree_head_text({"example.com/log", 3, bytes_0_to_31()});
  EXPECT_EQ(text, "example.com/log\n3\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n");
  const std::string note = sign_note(text, key, "example.com/log");
  EXPECT_EQ(
      note,
      text +
          "\n\xe2\x80\x94 example.com/log "
          "zHFGcFOjv/"
          "y1MHztbp5d1LpjCP+UOq6WJ3dPtvECEjlZGndWrL1LJ759trI7PZshapUTE2F87ho4oX7VPDTHBs5jLwM=\n");
}

TEST(SignedNote, RoundTripAndWrongKeys) {
  const Ed25519Key key = Ed25519Key::generate();
  const VerifierKey vkey = VerifierKey::of("leasefs/test", key.public_key());
  const std::string note =
      sign_note(tree_head_text({"leasefs/test/root", 12, bytes_0_to_31()}), key, "leasefs/test");
  std::string why;
  const auto parsed = parse_note(note, &why);
  ASSERT_TRUE(parsed) << why;
  EXPECT_EQ(check_note(*parsed, vkey), NoteCheck::kVerified);
  const auto head = parse_tree_head(parsed->text, &why);
  ASSERT_TRUE(head) << why;
  EXPECT_EQ(head->origin, "leasefs/test/root");
  EXPECT_EQ(head->size, 12u);
  EXPECT_EQ(head->root_hash, bytes_0_to_31());

  // Another key: its lines are ignored, so the note is not signed by it.
  const VerifierKey other = VerifierKey::of("leasefs/test", Ed25519Key::generate().public_key());
  EXPECT_EQ(check_note(*parsed, other), NoteCheck::kNotSigned);
  // The same name and ID, another text: the signature fails.
  Note forged = *parsed;
  forged.text = tree_head_text({"leasefs/test/root", 13, bytes_0_to_31()});
  EXPECT_EQ(check_note(forged, vkey), NoteCheck::kBadSignature);
}

TEST(SignedNote, ParsingIsStrict) {
  const Ed25519Key key = Ed25519Key::generate();
  const std::string note = sign_note("o\n1\n" + base64_encode(bytes_0_to_31()) + "\n", key, "k");
  std::string why;
  ASSERT_TRUE(parse_note(note, &why)) << why;
  EXPECT_FALSE(parse_note(note.substr(0, note.size() - 1), &why));  // no final newline
  EXPECT_FALSE(parse_note(note + "\n", &why));                      // a blank line at the end
  std::string dash = note;
  dash.replace(dash.find("\xe2\x80\x94"), 3, "--");
  EXPECT_FALSE(parse_note(dash, &why));
  std::string control = note;
  control[0] = '\t';
  EXPECT_FALSE(parse_note(control, &why));
  EXPECT_THROW(sign_note("no newline", key, "k"), std::invalid_argument);
  EXPECT_THROW(sign_note("a\n", key, "a+b"), std::invalid_argument);
}

TEST(TreeHead, SizeAndHashAreStrict) {
  std::string why;
  const std::string hash = base64_encode(bytes_0_to_31());
  EXPECT_TRUE(parse_tree_head("o\n0\n" + hash + "\n", &why)) << why;
  EXPECT_TRUE(parse_tree_head("o\n10\n" + hash + "\next\n", &why)) << why;
  EXPECT_FALSE(parse_tree_head("o\n010\n" + hash + "\n", &why));
  EXPECT_FALSE(parse_tree_head("o\n+1\n" + hash + "\n", &why));
  EXPECT_FALSE(parse_tree_head("o\n99999999999999999999999\n" + hash + "\n", &why));
  EXPECT_FALSE(parse_tree_head("\n1\n" + hash + "\n", &why));
  EXPECT_FALSE(parse_tree_head("o\n1\n" + base64_encode("short") + "\n", &why));
  EXPECT_FALSE(parse_tree_head("o\n1\n" + hash + "\n\n", &why));
  EXPECT_EQ(hash_bytes(std::string(64, 'a')), std::string(32, '\xaa'));
  EXPECT_FALSE(hash_bytes(std::string(64, 'A')));
  EXPECT_FALSE(hash_bytes(std::string(63, 'a')));
}

}  // namespace
}  // namespace leasefs::signing
