/* gcc_compat.h — the one place that includes GCC's plugin headers and tests
   the version of the GCC we plug into (GCCPLUGIN_VERSION, never __GNUC__),
   after the Linux kernel's scripts/gcc-plugins/gcc-common.h.  Pass logic
   includes this header and stays free of version #ifs.

   Standard C++ headers and ballarus' own GCC-free headers must be included
   *before* this one: GCC's system.h poisons identifiers (malloc, strdup, ...)
   that libstdc++ headers use.  The plugin's headers that need GCC's types
   (cfg_prep.h, counter_emit.h, ...) include this one last themselves; a
   source file includes them after it, once every standard and GCC-free
   header is in.  */

#ifndef BALLARUS_PLUGIN_GCC_COMPAT_H
#define BALLARUS_PLUGIN_GCC_COMPAT_H

#include "gcc-plugin.h"
#include "plugin-version.h"

#if GCCPLUGIN_VERSION_MAJOR < 12 || GCCPLUGIN_VERSION_MAJOR > 13
#error "ballarus supports GCC 12 (and is untested with other versions)"
#endif

#include "config.h"
#include "system.h"
#include "coretypes.h"
#include "backend.h"
#include "tree.h"
#include "gimple.h"
#include "cfghooks.h"
#include "cfganal.h"
#include "cfgloop.h"
#include "tree-pass.h"
#include "ssa.h"
#include "cgraph.h"
#include "coverage.h"
#include "diagnostic-core.h"
#include "fold-const.h"
#include "varasm.h"
#include "stor-layout.h"
#include "stringpool.h"
#include "attribs.h"
#include "gimple-iterator.h"
#include "gimplify.h"
#include "gimplify-me.h"
#include "tree-cfg.h"
#include "tree-cfgcleanup.h"
#include "tree-dfa.h"
#include "tree-eh.h"
#include "tree-into-ssa.h"
#include "langhooks.h"
#include "memmodel.h"
#include "builtins.h"
#include "opts.h"
#include "options.h"
#include "toplev.h"
#include "output.h"
#include "tree-pretty-print.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "cfg.h"
#include "intl.h"
#include "version.h"
#include "tm_p.h" /* the target's address spaces: ADDR_SPACE_SEG_GS */

/* GCC 12 spells the pass-execution hook with a `function *` argument and
   passes are created with a gcc::context.  Nothing else differs between the
   versions we accept.  */

#endif /* BALLARUS_PLUGIN_GCC_COMPAT_H */
