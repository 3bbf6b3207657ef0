// Linked only into leasefs_bench_mount_gate_off, with -Wl,--wrap for the three
// Gate checks the filesystem calls on its allow path (check, check_rename,
// check_link): every call from libleasefs_fuse.a lands here and is allowed
// without reading the snapshot or calling decide(). The library itself is the
// same archive the daemon links, so the gate-off column of bench/fs_bench.sh runs
// the shipped code path with only the gate's decision taken out.
//
// The wrappers are named after the mangled members; on x86-64 (System V) a
// const member function returning a class by value is called as a free function
// taking the hidden result pointer first and `this` second, which is how these
// are declared.
#include <string_view>

#include "gate/effect.hpp"
#include "gate/gate.hpp"

using leasefs::gate::Caller;
using leasefs::gate::Effect;
using leasefs::gate::Gate;
using leasefs::gate::Op;
using leasefs::gate::RenamePlan;
using leasefs::gate::Verdict;

extern "C++" {
Verdict gate_off_check(const Gate*, Op, std::string_view, const Caller&) asm(
    "__wrap__ZNK7leasefs4gate4Gate5checkENS0_2OpESt17basic_string_viewIcSt11char_"
    "traitsIcEERKNS0_6CallerE");
Verdict gate_off_check_rename(const Gate*, const RenamePlan&, const Caller&, Effect*) asm(
    "__wrap__ZNK7leasefs4gate4Gate12check_renameERKNS0_10RenamePlanERKNS0_6CallerEPNS0_6EffectE");
Verdict
gate_off_check_link(const Gate*, std::string_view, std::string_view, const Caller&, Effect*) asm(
    "__wrap__ZNK7leasefs4gate4Gate10check_"
    "linkESt17basic_string_viewIcSt11char_"
    "traitsIcEES5_RKNS0_6CallerEPNS0_6EffectE");
}

Verdict gate_off_check(const Gate*, Op, std::string_view, const Caller&) {
  return {true, {}, {}};
}

Verdict gate_off_check_rename(const Gate*, const RenamePlan&, const Caller&, Effect*) {
  return {true, {}, {}};
}

Verdict gate_off_check_link(const Gate*, std::string_view, std::string_view, const Caller&,
                            Effect*) {
  return {true, {}, {}};
}
