// plugin.cc — the plugin's entry point: checks that the GCC loading it is the
// one it was built for, parses the options (options.cc), loads the profile of
// weights=profile=FILE, and registers the pass (pass.cc) — or, with
// tune-path-use=FILE, only the duplication pass of the -fprofile-use compile
// (path_dup.h).
//
//   gcc -fplugin=ballarus.so -fplugin-arg-ballarus-mode=naive ...
//
// What the plugin does to a translation unit, step by step, and which file
// owns each step: docs/DESIGN.md ("The plugin").

#include <string>

#include "plugin/gcov_arcs.h"
#include "plugin/options.h"
#include "plugin/profile_weights.h"
// GCC's headers come last: see gcc_compat.h.
#include "plugin/gcc_compat.h"
#include "plugin/pass.h"
#include "plugin/inline_sizes.h"
#include "plugin/path_dup.h"
#include "plugin/thread_counters.h"

int plugin_is_GPL_compatible;

namespace {

const char kPluginVersion[] = "0.4.0+dev";

// Runs `pass` right after the first instance of GCC's pass `reference`.
void RegisterPassAfter(const char* plugin_name, opt_pass* pass,
                       const char* reference) {
  register_pass_info info;
  info.pass = pass;
  info.reference_pass_name = reference;
  info.ref_pass_instance_number = 1;
  info.pos_op = PASS_POS_INSERT_AFTER;
  register_callback(plugin_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &info);
}

// tune-path-use=FILE: only the duplication pass, right after "profile" has read
// the edge profile (path_dup.h); nothing is instrumented.
int RegisterPathUse(plugin_name_args* info) {
  namespace bp = ballarus::plugin;
  std::string err;
  if (!bp::LoadPathProfile(bp::g_options.path_use, &err)) {
    error("ballarus: %<-fplugin-arg-ballarus-tune-path-use%>: %s", err.c_str());
    return 1;
  }
  RegisterPassAfter(info->base_name, bp::make_path_dup_pass(g), "profile");
  if (bp::g_options.dump)
    g->get_dumps()->dump_switch_p("ipa-ballarus-pathdup");
  return 0;
}

}  // namespace

int plugin_init(plugin_name_args* info, plugin_gcc_version* version) {
  namespace bp = ballarus::plugin;
  if (!plugin_default_version_check(version, &gcc_version)) {
    error("ballarus: built for GCC %s, but this is GCC %s",
          gcc_version.basever, version->basever);
    return 1;
  }
  static plugin_info pinfo = {kPluginVersion, bp::kHelp};
  register_callback(info->base_name, PLUGIN_INFO, NULL, &pinfo);
  if (!bp::ParseOptions(info)) return 1;
  if (bp::g_options.weights == bp::WeightKind::kProfile) {
    std::string err;
    if (!bp::g_profile_weights.Load(bp::g_options.profile_path, &err)) {
      error("ballarus: %<-fplugin-arg-ballarus-weights=profile=%s%>: %s",
            bp::g_options.profile_path.c_str(), err.c_str());
      return 1;
    }
  }

  if (!bp::g_options.path_use.empty()) return RegisterPathUse(info);

  // Why here: right after GCC's own "profile" pass (tree-profile.cc), the
  // point where -fprofile-arcs instruments — after early inlining and local
  // cleanups, before the IPA optimisations — so a ballarus CFG is gcov's CFG
  // for the same compile and counts compare edge by edge.
  RegisterPassAfter(info->base_name, bp::make_ballarus_pass(g), "profile");
  // The inliner's summaries without the instrumentation (inline_sizes.h).
  RegisterPassAfter(info->base_name, bp::MakeInlineSizesPass(g), "fnsummary");
  // Last in GIMPLE: update=tls's constant-index counts.
  RegisterPassAfter(info->base_name, bp::MakeSegmentFoldPass(g),
                    "optimized");
  ballarus::GcovRegister(info->base_name);  // early passes as -fprofile-arcs
  // Under -flto the link-time compilations emit the counter arrays.
  register_callback(
      info->base_name, PLUGIN_START_UNIT,
      [](void*, void*) {
        if (in_lto_p) ballarus::plugin::DeclareThreadSection();
      },
      NULL);
  // The pass manager already exists when plugins initialise, so the pass is
  // registered by now and its dump can be switched on by name.
  if (bp::g_options.dump) g->get_dumps()->dump_switch_p("ipa-ballarus");
  return 0;
}
