/* debfetch_dsc_parse (debfetch.h): a .dsc's Source, Version, Format and
 * the files its Checksums-Sha256 lists, from Debian's clearsigned hello
 * .dsc and an unsigned one as dpkg-source -b writes it, and the .dsc
 * files it refuses: no sha256 for a file Files names, a name with '/', a
 * line that is not SHA256 SIZE NAME, a file listed twice, no Version. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "drivers/debfetch.h"

/* hello_2.12.3-1.dsc as deb.debian.org serves it (the signature cut short:
 * it is not checked) */
static const char hello[] =
    "-----BEGIN PGP SIGNED MESSAGE-----\n"
    "Hash: SHA512\n"
    "\n"
    "Format: 3.0 (quilt)\n"
    "Source: hello\n"
    "Binary: hello\n"
    "Architecture: any\n"
    "Version: 2.12.3-1\n"
    "Maintainer: Santiago Vila <sanvila@debian.org>\n"
    "Build-Depends: debhelper-compat (= 13), texinfo\n"
    "Package-List:\n"
    " hello deb devel optional arch=any\n"
    "Checksums-Sha1:\n"
    " ee4030e966d16463e490444812f75b681eda71a4 1189208 hello_2.12.3.orig.tar.gz\n"
    " b1610f1fbdd8468c2d704855bb194e1e6d4d9c16 833 hello_2.12.3.orig.tar.gz.asc\n"
    " e7f7e764da1b7ff6cfdede80c56cf5a705babbf0 11032 hello_2.12.3-1.debian.tar.xz\n"
    "Checksums-Sha256:\n"
    " 0d5f60154382fee10b114a1c34e785d8b1f492073ae2d3a6f7b147687b366aa0 1189208 "
    "hello_2.12.3.orig.tar.gz\n"
    " 8f875bf880f56276d44389fee54d89a6e6cc3e79f58c011ad31ce7f91a3cc73a 833 "
    "hello_2.12.3.orig.tar.gz.asc\n"
    " 7aabce576ba8fde019f8b7f636131000a6f91a3b797e959b387f2520afeaadef 11032 "
    "hello_2.12.3-1.debian.tar.xz\n"
    "Files:\n"
    " abf08b16a616ed2902df4ab4846884be 1189208 hello_2.12.3.orig.tar.gz\n"
    " 1d5146fe30108924480c2d8b45ac4623 833 hello_2.12.3.orig.tar.gz.asc\n"
    " 98be6b2f45074c1bdc45fee9efda366c 11032 hello_2.12.3-1.debian.tar.xz\n"
    "\n"
    "-----BEGIN PGP SIGNATURE-----\n"
    "\n"
    "iQEzBAEBCgAdFiEE1Uw7+v+wQt44LaXXQc5/C58bizIFAmoFhxkACgkQQc5/C58b\n"
    "-----END PGP SIGNATURE-----\n";

#define SHA_A "58c3c810a2cbcea953a7d29508f476799133662906754e68aae4a593f488543c"
#define SHA_B "a716b11d3f1d888ba2a671abd50fab224a250c109dbd948c5a406cc13adcc362"

/* An unsigned 1.0 .dsc with FIELDS after its Source and Version. */
static char *unsigned_dsc(const char *fields)
{
    return xasprintf("Format: 1.0\nSource: tr\nVersion: 1:1.0-1\n%s", fields);
}

static void test_hello(void **state)
{
    (void)state;
    struct dsc_info d;
    char *err = NULL;
    assert_int_equal(debfetch_dsc_parse(hello, &d, &err), 0);
    assert_null(err);
    assert_string_equal(d.source, "hello");
    assert_string_equal(d.version, "2.12.3-1");
    assert_string_equal(d.format, "3.0 (quilt)");
    assert_int_equal(d.n, 3);
    assert_string_equal(d.files[0].name, "hello_2.12.3.orig.tar.gz");
    assert_string_equal(d.files[0].sha256,
                        "0d5f60154382fee10b114a1c34e785d8b1f492073ae2d3a6f7b147687b366aa0");
    assert_string_equal(d.files[1].name, "hello_2.12.3.orig.tar.gz.asc");
    assert_string_equal(d.files[2].name, "hello_2.12.3-1.debian.tar.xz");
    assert_string_equal(d.files[2].sha256,
                        "7aabce576ba8fde019f8b7f636131000a6f91a3b797e959b387f2520afeaadef");
    dsc_info_free(&d);
}

static void test_unsigned(void **state)
{
    (void)state;
    char *t = unsigned_dsc("Checksums-Sha256:\n " SHA_A " 340 tr_1.0.tar.gz\n"
                           "Files:\n 2baff54c6904d9d63e9a5a581216a53a 340 tr_1.0.tar.gz\n");
    struct dsc_info d;
    char *err = NULL;
    assert_int_equal(debfetch_dsc_parse(t, &d, &err), 0);
    assert_string_equal(d.version, "1:1.0-1");
    assert_int_equal(d.n, 1);
    assert_string_equal(d.files[0].name, "tr_1.0.tar.gz");
    dsc_info_free(&d);
    free(t);
}

/* FIELDS refused with a reason containing WANT. */
static void refused(const char *text, const char *want)
{
    struct dsc_info d;
    char *err = NULL;
    assert_int_equal(debfetch_dsc_parse(text, &d, &err), -1);
    assert_non_null(err);
    if (!strstr(err, want))
        fail_msg("'%s' lacks '%s'", err, want);
    assert_null(d.files);
    assert_null(d.source);
    free(err);
}

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *fields, *why;
    } bad[] = {
        {"Files:\n 2baff54c6904d9d63e9a5a581216a53a 340 tr_1.0.tar.gz\n", "no Checksums-Sha256"},
        {"Checksums-Sha256:\n " SHA_A " 340 tr_1.0.tar.gz\n"
         "Files:\n 2baff54c6904d9d63e9a5a581216a53a 340 tr_1.0.tar.gz\n"
         " c82948ac65d30912bbf64d7ce7068eeb 788 tr_1.0-1.diff.gz\n",
         "Files lists tr_1.0-1.diff.gz, which Checksums-Sha256 does not"},
        {"Checksums-Sha256:\n " SHA_A " 340 ../tr_1.0.tar.gz\n", "is not SHA256 SIZE NAME"},
        {"Checksums-Sha256:\n " SHA_A " 340 .hidden\n", "is not SHA256 SIZE NAME"},
        {"Checksums-Sha256:\n 58c3 340 tr_1.0.tar.gz\n", "is not SHA256 SIZE NAME"},
        {"Checksums-Sha256:\n " SHA_A " 340 tr_1.0.tar.gz extra\n", "is not SHA256 SIZE NAME"},
        {"Checksums-Sha256:\n " SHA_A " 340 tr_1.0.tar.gz\n " SHA_B " 788 tr_1.0.tar.gz\n",
         "lists tr_1.0.tar.gz twice"},
        {"Checksums-Sha256:\n", "lists no file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *t = unsigned_dsc(bad[i].fields);
        refused(t, bad[i].why);
        free(t);
    }
    refused("Format: 1.0\nSource: tr\nChecksums-Sha256:\n " SHA_A " 340 tr_1.0.tar.gz\n",
            "no Source or Version");
    /* the second paragraph is not the .dsc's */
    refused("Source: tr\nVersion: 1.0\n\nChecksums-Sha256:\n " SHA_A " 340 tr_1.0.tar.gz\n",
            "no Checksums-Sha256");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello),
        cmocka_unit_test(test_unsigned),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
