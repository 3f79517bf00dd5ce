"""Repository rule exposing system libraries and GCC's plugin headers to Bazel.

The plugin include directory is found by asking the installed gcc
(`gcc -print-file-name=plugin`), never hard-coded, so the build follows
whatever GCC the machine has.
"""

def _gcc_plugin_impl(rctx):
    gcc = rctx.which("gcc")
    if gcc == None:
        fail("gcc not found on PATH; install gcc and gcc-12-plugin-dev (see README.md)")
    res = rctx.execute([gcc, "-print-file-name=plugin"])
    if res.return_code != 0:
        fail("`gcc -print-file-name=plugin` failed: " + res.stderr)
    plugin_dir = res.stdout.strip()
    inc = plugin_dir + "/include"
    if not rctx.path(inc + "/gcc-plugin.h").exists:
        fail("GCC plugin headers not found in %s; install gcc-12-plugin-dev (see README.md)" % inc)
    rctx.symlink(inc, "include")
    rctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h", "include/**/*.def"]),
    includes = ["include"],
)
""")
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)

gcc_plugin_headers = repository_rule(
    implementation = _gcc_plugin_impl,
    local = True,
    environ = ["PATH"],
)
