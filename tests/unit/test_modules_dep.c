/* Unit tests for builder/formats/modules_dep.c: parsing depmod's modules.dep and
 * modules.builtin, and resolving module names into a load order. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/modules_dep.h"
#include "base/util.h"

/* Shaped like a real Debian cloud kernel's modules.dep: transitive
 * dependency lists, with the ones loaded first at the end. */
static const char *dep_text =
    "kernel/drivers/virtio/virtio.ko:\n"
    "kernel/drivers/virtio/virtio_ring.ko:\n"
    "kernel/drivers/virtio/virtio_pci_legacy_dev.ko:\n"
    "kernel/drivers/virtio/virtio_pci_modern_dev.ko:\n"
    "kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko "
    "kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "\n"
    "kernel/drivers/scsi/scsi_common.ko:\n"
    "kernel/drivers/scsi/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko\n"
    "kernel/drivers/scsi/sd_mod.ko: kernel/drivers/scsi/scsi_mod.ko "
    "kernel/drivers/scsi/scsi_common.ko\n"
    "kernel/fs/squashfs/squashfs.ko.xz:\n"
    "kernel/drivers/md/dm-mod.ko:\n";

static const char *builtin_text = "kernel/fs/ext4/ext4.ko\nkernel/fs/jbd2/jbd2.ko\n";

static size_t index_of(const struct strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return i;
    fail_msg("%s not in the list", s);
    return (size_t)-1;
}

static void test_name(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"kernel/fs/fuse/fuse.ko", "fuse"},
        {"kernel/fs/fuse/fuse.ko.xz", "fuse"},
        {"kernel/fs/fuse/fuse.ko.zst", "fuse"},
        {"virtio-blk", "virtio_blk"},
        {"dm-mod.ko", "dm_mod"},
        {"ext4", "ext4"},
        {"kobject", "kobject"}, /* ".ko" only counts as a suffix */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char *n = modules_dep_name(cases[i][0]);
        assert_string_equal(n, cases[i][1]);
        free(n);
    }
}

static void test_parse_counts(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse(dep_text, builtin_text, &err);
    assert_non_null(d);
    assert_null(err);
    assert_int_equal(modules_dep_count(d), 11);
    modules_dep_free(d);
}

static void test_order_deps_first(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse(dep_text, builtin_text, &err);
    assert_non_null(d);
    struct strlist names = {0}, order = {0}, builtin = {0};
    strlist_push(&names, "virtio_pci");
    strlist_push(&names, "virtio-blk");
    strlist_push(&names, "sd_mod");
    assert_int_equal(modules_dep_resolve(d, &names, &order, &builtin, &err), 0);
    assert_null(err);
    /* virtio_pci and its 4 parts, virtio_blk, scsi_common, scsi_mod, sd_mod; each once. */
    assert_int_equal(order.n, 9);
    assert_int_equal(builtin.n, 0);
    size_t pci = index_of(&order, "kernel/drivers/virtio/virtio_pci.ko");
    size_t blk = index_of(&order, "kernel/drivers/block/virtio_blk.ko");
    size_t virtio = index_of(&order, "kernel/drivers/virtio/virtio.ko");
    size_t ring = index_of(&order, "kernel/drivers/virtio/virtio_ring.ko");
    size_t sd = index_of(&order, "kernel/drivers/scsi/sd_mod.ko");
    size_t mod = index_of(&order, "kernel/drivers/scsi/scsi_mod.ko");
    size_t common = index_of(&order, "kernel/drivers/scsi/scsi_common.ko");
    assert_true(virtio < pci && ring < pci && virtio < blk && ring < blk);
    assert_true(common < mod && mod < sd);
    /* Requested order is kept where dependencies allow. */
    assert_true(pci < blk && blk < sd);
    for (size_t i = 0; i < order.n; i++)
        for (size_t j = i + 1; j < order.n; j++)
            assert_string_not_equal(order.v[i], order.v[j]);
    strlist_free(&names);
    strlist_free(&order);
    strlist_free(&builtin);
    modules_dep_free(d);
}

static void test_builtin_and_compressed(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse(dep_text, builtin_text, &err);
    struct strlist names = {0}, order = {0}, builtin = {0};
    strlist_push(&names, "ext4");
    strlist_push(&names, "squashfs");
    strlist_push(&names, "dm_mod");
    assert_int_equal(modules_dep_resolve(d, &names, &order, &builtin, &err), 0);
    assert_int_equal(order.n, 2);
    assert_string_equal(order.v[0], "kernel/fs/squashfs/squashfs.ko.xz");
    assert_string_equal(order.v[1], "kernel/drivers/md/dm-mod.ko");
    assert_int_equal(builtin.n, 1);
    assert_string_equal(builtin.v[0], "ext4");
    strlist_free(&names);
    strlist_free(&order);
    strlist_free(&builtin);
    modules_dep_free(d);
}

static void test_unknown_module(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse(dep_text, NULL, &err);
    struct strlist names = {0}, order = {0};
    strlist_push(&names, "virtio_blk");
    strlist_push(&names, "ext4"); /* builtin text not given: unknown */
    assert_int_equal(modules_dep_resolve(d, &names, &order, NULL, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, "'ext4'"));
    free(err);
    strlist_free(&names);
    strlist_free(&order);
    modules_dep_free(d);
}

static void test_cycle(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse("a.ko: b.ko\nb.ko: c.ko\nc.ko: a.ko\n", NULL, &err);
    assert_non_null(d);
    struct strlist names = {0}, order = {0};
    strlist_push(&names, "a");
    assert_int_equal(modules_dep_resolve(d, &names, &order, NULL, &err), -1);
    assert_non_null(strstr(err, "cycle"));
    free(err);
    strlist_free(&names);
    strlist_free(&order);
    modules_dep_free(d);
}

static void test_leaf_without_line(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse("x/a.ko: x/b.ko\n", NULL, &err);
    struct strlist names = {0}, order = {0};
    strlist_push(&names, "a");
    assert_int_equal(modules_dep_resolve(d, &names, &order, NULL, &err), 0);
    assert_int_equal(order.n, 2);
    assert_string_equal(order.v[0], "x/b.ko");
    assert_string_equal(order.v[1], "x/a.ko");
    strlist_free(&names);
    strlist_free(&order);
    modules_dep_free(d);
}

static void test_malformed(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse("a.ko:\n\nthis line has no colon\n", NULL, &err);
    assert_null(d);
    assert_non_null(err);
    assert_non_null(strstr(err, "line 3"));
    free(err);
}

static void test_resolve_twice(void **state)
{
    (void)state;
    char *err = NULL;
    struct modules_dep *d = modules_dep_parse(dep_text, builtin_text, &err);
    struct strlist names = {0}, a = {0}, b = {0};
    strlist_push(&names, "virtio_blk");
    assert_int_equal(modules_dep_resolve(d, &names, &a, NULL, &err), 0);
    assert_int_equal(modules_dep_resolve(d, &names, &b, NULL, &err), 0);
    assert_int_equal(a.n, 3);
    assert_int_equal(b.n, 3);
    for (size_t i = 0; i < a.n; i++)
        assert_string_equal(a.v[i], b.v[i]);
    strlist_free(&names);
    strlist_free(&a);
    strlist_free(&b);
    modules_dep_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name),
        cmocka_unit_test(test_parse_counts),
        cmocka_unit_test(test_order_deps_first),
        cmocka_unit_test(test_builtin_and_compressed),
        cmocka_unit_test(test_unknown_module),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_leaf_without_line),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_resolve_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
