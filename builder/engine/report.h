/* The build report: OUT/report.html (one self-contained page: components,
 * boot checks with their transcripts, a stage timeline with the critical
 * path, artifacts) and OUT/junit.xml (stages and boot-check steps), both
 * made from OUT/manifest.json alone, so `trillian report` can remake them;
 * and the matrix of several builds (kernel x machine x loader). */
#ifndef TRILLIAN_REPORT_H
#define TRILLIAN_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "base/util.h"

/* Writes OUTDIR/report.html, OUTDIR/junit.xml and OUTDIR/sbom.spdx.json
 * from OUTDIR/manifest.json. 0, or -1 with a message on stderr. */
int report_write(const char *outdir);

/* The last lines of a build, from OUTDIR/manifest.json: a table of the
 * stages (time and state: built, cached, failed, skipped, blocked, not
 * started), each boot check's verdict, the images with sha256 and what to
 * do with them, and the verdict line: "ok, boot-verified", "built, not
 * boot-verified" (no check passed: each skipped or blocked, or none),
 * "FAILED" or "interrupted", with the primary image, its sha256 and every
 * check's verdict. SECONDS: the build's time. 0, or -1 with a message. */
int report_summary(const char *outdir, double seconds, FILE *f);

/* One page for several builds (each an OUT directory with a manifest): the
 * matrix table, then each build's report. To PATH ("-" = stdout). */
int report_matrix(const char *const *outdirs, size_t n, const char *path);
/* The same with PREAMBLE (HTML) after the heading, and each cell also
 * linking the check's transcript (OUT/CHECK/CHECK.log) and the anchor
 * "#images-RECIPE" that PREAMBLE is to hold: `trillian publish`'s
 * index.html, where OUTDIRS are paths relative to the page. */
int report_matrix_page(const char *const *outdirs, size_t n, const char *preamble,
                       const char *path);

/* The components a build names, from its manifest's STAGES (components.c):
 * a new array, one object per component (the toolchain's gcc and binutils,
 * Linux, and what each other kind declares: stage.h, struct
 * stage_component) with "component",
 * "version", "built_here" (built from source, by this build or one whose
 * cache entry it reused), "origin" ("source", "debian-package", "host"),
 * "source" (file name or URL), "sha256", "stage", "kind", "status", and
 * "package" and "package_version" for a Debian package. A value the stage's
 * manifest does not record is null. */
struct json_object;
struct json_object *report_components(struct json_object *stages);
/* The declaration of COMP, a component of that array, by its kind (NULL for
 * the toolchain's and the kernel's, or a kind no longer built). */
struct stage_component;
const struct stage_component *component_declared(struct json_object *comp);

/* OUTDIR/sbom.spdx.json (SPDX 2.3, JSON) from the manifest M (sbom.c): the
 * build, its images, the root and the components as packages; the images
 * CONTAIN the kernel, the root and the loader, the root its C library,
 * busybox and libgcc; the toolchain is BUILD_TOOL_OF and the emulators
 * TEST_TOOL_OF the build. A licence the component's project declares, else
 * NOASSERTION. 0, or -1 with a message on stderr. */
int sbom_write(const char *outdir, struct json_object *m);

/* HTML text escaping (&, <, >, ", '). */
void html_escape(struct buf *b, const char *s);

/* The critical path: stage indexes from the first to the one that ended
 * last, each the dependency that ended last before its successor started.
 * N stages with END times and DEPS (index lists, ndeps each); returns the
 * count written to PATH (at most n). */
struct report_span {
    double start, end;
    const size_t *deps;
    size_t ndeps;
};
size_t critical_path(const struct report_span *s, size_t n, size_t *path);

#endif
