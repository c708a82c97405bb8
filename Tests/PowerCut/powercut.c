// The power-cut VFS (see powercut.h): our own code, over the system SQLite's default VFS.
#include "powercut.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { sectorSize = 512, maxTrackedFiles = 16 };

/// What one write (or the part of a truncation that removed bytes) overwrote: `count` bytes
/// at `offset`, zeros where the file did not reach.
typedef struct {
    sqlite3_int64 offset;
    int count;
    unsigned char *old;
} Overwrite;

/// A file whose writes are not durable until it is synced, by its path: every handle of a
/// path shares it, as a sync through any descriptor flushes the file.
typedef struct {
    char *path;  // NULL: a free slot
    const char *role;  // "database", "log" or "journal"
    sqlite3_int64 syncedSize;
    Overwrite *overwrites;
    int count, capacity;
} TrackedFile;

typedef struct {
    sqlite3_file base;
    sqlite3_file *real;  // the default VFS's file, allocated right after this struct
    int tracked;         // the TrackedFile's index, or -1
} PowerCutFile;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static TrackedFile tracked[maxTrackedFiles];
static sqlite3_vfs *root;
static sqlite3_vfs vfs;
static long long cutAt;
static int cutAtSyncs;
static long long events;
static long long syncs;
static unsigned long long randomState;
static int exitStatus;

static unsigned long long nextRandom(void) {
    // xorshift64*
    randomState ^= randomState >> 12;
    randomState ^= randomState << 25;
    randomState ^= randomState >> 27;
    return randomState * 2685821657736338717ULL;
}

static void forget(TrackedFile *file) {
    for (int i = 0; i < file->count; i++) free(file->overwrites[i].old);
    file->count = 0;
}

// MARK: The power cut

typedef struct {
    int writes;  // pending writes that touch the sector
    int kept;    // how many of them reach the disk, in order
    int seen;    // counted down as the writes are undone, newest first
} Sector;

/// Leaves `file` as a power cut may: each sector keeps the first `kept` of its pending
/// writes (none, all, or a random number, as chosen for the file), the rest undone.
///
/// Returns how many of the pending writes were undone, in part or whole.
static int cut(TrackedFile *file) {
    if (file->count == 0) return 0;
    int descriptor = open(file->path, O_RDWR | O_CLOEXEC);
    if (descriptor < 0) return 0;
    sqlite3_int64 low = file->overwrites[0].offset, high = 0;
    for (int i = 0; i < file->count; i++) {
        Overwrite *w = &file->overwrites[i];
        if (w->offset < low) low = w->offset;
        if (w->offset + w->count > high) high = w->offset + w->count;
    }
    sqlite3_int64 first = low / sectorSize;
    sqlite3_int64 sectorCount = (high + sectorSize - 1) / sectorSize - first;
    Sector *sectors = calloc((size_t)sectorCount, sizeof(Sector));
    if (sectors == NULL) _exit(exitStatus);
    for (int i = 0; i < file->count; i++) {
        Overwrite *w = &file->overwrites[i];
        for (sqlite3_int64 s = w->offset / sectorSize; s * sectorSize < w->offset + w->count; s++) {
            sectors[s - first].writes++;
        }
    }
    int mode = (int)(nextRandom() % 4);  // 0: every write lost; 1: every one kept; else sector by sector
    for (sqlite3_int64 s = 0; s < sectorCount; s++) {
        Sector *sector = &sectors[s];
        sector->seen = sector->writes;
        sector->kept = mode == 0 ? 0 : mode == 1 ? sector->writes : (int)(nextRandom() % (unsigned)(sector->writes + 1));
    }
    int undone = 0;
    sqlite3_int64 keptEnd = 0;
    for (int i = file->count - 1; i >= 0; i--) {
        Overwrite *w = &file->overwrites[i];
        int partUndone = 0;
        for (sqlite3_int64 s = w->offset / sectorSize; s * sectorSize < w->offset + w->count; s++) {
            Sector *sector = &sectors[s - first];
            sector->seen--;
            sqlite3_int64 start = s * sectorSize > w->offset ? s * sectorSize : w->offset;
            sqlite3_int64 end = (s + 1) * sectorSize < w->offset + w->count ? (s + 1) * sectorSize : w->offset + w->count;
            if (sector->seen < sector->kept) {
                if (end > keptEnd) keptEnd = end;
                continue;
            }
            partUndone = 1;
            const unsigned char *old = w->old + (start - w->offset);
            sqlite3_int64 done = 0;
            while (done < end - start) {
                ssize_t n = pwrite(descriptor, old + done, (size_t)(end - start - done), start + done);
                if (n <= 0) break;
                done += n;
            }
        }
        undone += partUndone;
    }
    free(sectors);
    // Past what was synced, the file's length may go back to what the kept writes reach, or
    // stay, with zeros where writes were lost.
    if (nextRandom() % 2 == 0) {
        sqlite3_int64 length = keptEnd > file->syncedSize ? keptEnd : file->syncedSize;
        struct stat status;
        if (fstat(descriptor, &status) == 0 && status.st_size > length) {
            if (ftruncate(descriptor, length) != 0) { /* the length stays */ }
        }
    }
    close(descriptor);
    return undone;
}

/// Writes `text` to standard output at once (the torture's child reports on it).
static void say(const char *text) {
    size_t length = strlen(text), done = 0;
    while (done < length) {
        ssize_t n = write(1, text + done, length - done);
        if (n <= 0) return;
        done += (size_t)n;
    }
}

/// Counts one write, truncation or sync (`what`) of the tracked file `index`; at the
/// `cutAt`-th (of the database's syncs and truncations alone, with `cutAtSyncs`), the power
/// goes off: the pending writes of every tracked file are cut, a line says where the cut
/// landed and how many writes it undid (`power-cut sync log: 37 writes pending, 12 undone`),
/// and the process exits. Called with `lock` held.
static void countEvent(const char *what, int index) {
    events++;
    int ofDatabase = what[0] != 'w' && strcmp(tracked[index].role, "database") == 0;
    if (ofDatabase) syncs++;
    if (cutAtSyncs ? !ofDatabase || syncs != cutAt : events != cutAt) return;
    int pending = 0, undone = 0;
    for (int i = 0; i < maxTrackedFiles; i++) {
        if (tracked[i].path == NULL) continue;
        pending += tracked[i].count;
        undone += cut(&tracked[i]);
    }
    char line[160];
    snprintf(line, sizeof line, "power-cut %s %s: %d writes pending, %d undone\n", what, tracked[index].role, pending, undone);
    say(line);
    _exit(exitStatus);
}

// MARK: Files

static int fileSize(sqlite3_file *real, sqlite3_int64 *size) {
    return real->pMethods->xFileSize(real, size);
}

static int pcClose(sqlite3_file *file) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xClose(p->real);
}

static int pcRead(sqlite3_file *file, void *buffer, int count, sqlite3_int64 offset) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xRead(p->real, buffer, count, offset);
}

static int pcWrite(sqlite3_file *file, const void *buffer, int count, sqlite3_int64 offset) {
    PowerCutFile *p = (PowerCutFile *)file;
    if (p->tracked >= 0 && count > 0) {
        pthread_mutex_lock(&lock);
        countEvent("write", p->tracked);
        TrackedFile *t = &tracked[p->tracked];
        unsigned char *old = malloc((size_t)count);
        if (old == NULL) _exit(exitStatus);
        // A read past the end fills the rest with zeros (SQLITE_IOERR_SHORT_READ).
        int code = p->real->pMethods->xRead(p->real, old, count, offset);
        if (code != SQLITE_OK && code != SQLITE_IOERR_SHORT_READ) memset(old, 0, (size_t)count);
        if (t->count == t->capacity) {
            t->capacity = t->capacity ? t->capacity * 2 : 64;
            t->overwrites = realloc(t->overwrites, (size_t)t->capacity * sizeof(Overwrite));
            if (t->overwrites == NULL) _exit(exitStatus);
        }
        t->overwrites[t->count++] = (Overwrite){offset, count, old};
        pthread_mutex_unlock(&lock);
    }
    return p->real->pMethods->xWrite(p->real, buffer, count, offset);
}

static int pcTruncate(sqlite3_file *file, sqlite3_int64 size) {
    PowerCutFile *p = (PowerCutFile *)file;
    if (p->tracked >= 0) {
        pthread_mutex_lock(&lock);
        countEvent("truncate", p->tracked);
        // Durable at once: the pending writes past `size` are gone with the bytes they wrote.
        TrackedFile *t = &tracked[p->tracked];
        int kept = 0;
        for (int i = 0; i < t->count; i++) {
            Overwrite w = t->overwrites[i];
            if (w.offset >= size) {
                free(w.old);
                continue;
            }
            if (w.offset + w.count > size) w.count = (int)(size - w.offset);
            t->overwrites[kept++] = w;
        }
        t->count = kept;
        if (t->syncedSize > size) t->syncedSize = size;
        pthread_mutex_unlock(&lock);
    }
    return p->real->pMethods->xTruncate(p->real, size);
}

static int pcSync(sqlite3_file *file, int flags) {
    PowerCutFile *p = (PowerCutFile *)file;
    if (p->tracked < 0) return p->real->pMethods->xSync(p->real, flags);
    pthread_mutex_lock(&lock);
    countEvent("sync", p->tracked);
    pthread_mutex_unlock(&lock);
    int code = p->real->pMethods->xSync(p->real, flags);
    if (code == SQLITE_OK) {
        pthread_mutex_lock(&lock);
        TrackedFile *t = &tracked[p->tracked];
        forget(t);
        sqlite3_int64 size = 0;
        if (fileSize(p->real, &size) == SQLITE_OK) t->syncedSize = size;
        pthread_mutex_unlock(&lock);
    }
    return code;
}

static int pcFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    return fileSize(((PowerCutFile *)file)->real, size);
}

static int pcLock(sqlite3_file *file, int level) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xLock(p->real, level);
}

static int pcUnlock(sqlite3_file *file, int level) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int pcCheckReservedLock(sqlite3_file *file, int *result) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xCheckReservedLock(p->real, result);
}

static int pcFileControl(sqlite3_file *file, int operation, void *argument) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xFileControl(p->real, operation, argument);
}

static int pcSectorSize(sqlite3_file *file) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xSectorSize(p->real);
}

static int pcDeviceCharacteristics(sqlite3_file *file) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int pcShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **memory) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xShmMap(p->real, region, size, extend, memory);
}

static int pcShmLock(sqlite3_file *file, int offset, int count, int flags) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xShmLock(p->real, offset, count, flags);
}

static void pcShmBarrier(sqlite3_file *file) {
    PowerCutFile *p = (PowerCutFile *)file;
    p->real->pMethods->xShmBarrier(p->real);
}

static int pcShmUnmap(sqlite3_file *file, int deleteFlag) {
    PowerCutFile *p = (PowerCutFile *)file;
    return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static int pcFetch(sqlite3_file *file, sqlite3_int64 offset, int count, void **pages) {
    PowerCutFile *p = (PowerCutFile *)file;
    if (p->real->pMethods->iVersion < 3) {
        *pages = NULL;
        return SQLITE_OK;
    }
    return p->real->pMethods->xFetch(p->real, offset, count, pages);
}

static int pcUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *pages) {
    PowerCutFile *p = (PowerCutFile *)file;
    if (p->real->pMethods->iVersion < 3) return SQLITE_OK;
    return p->real->pMethods->xUnfetch(p->real, offset, pages);
}

static const sqlite3_io_methods methods = {
    3,
    pcClose, pcRead, pcWrite, pcTruncate, pcSync, pcFileSize, pcLock, pcUnlock, pcCheckReservedLock,
    pcFileControl, pcSectorSize, pcDeviceCharacteristics,
    pcShmMap, pcShmLock, pcShmBarrier, pcShmUnmap,
    pcFetch, pcUnfetch,
};

// MARK: The VFS

/// The slot of `path`, taken if it has none; -1 when every slot is taken.
static int track(const char *path, const char *role, sqlite3_file *real) {
    int slot = -1;
    for (int i = 0; i < maxTrackedFiles; i++) {
        if (tracked[i].path == NULL) {
            if (slot < 0) slot = i;
        } else if (strcmp(tracked[i].path, path) == 0) {
            return i;
        }
    }
    if (slot < 0) return -1;
    tracked[slot].path = strdup(path);
    if (tracked[slot].path == NULL) return -1;
    sqlite3_int64 size = 0;
    tracked[slot].syncedSize = fileSize(real, &size) == SQLITE_OK ? size : 0;
    tracked[slot].role = role;
    tracked[slot].count = 0;
    return slot;
}

static int pcOpen(sqlite3_vfs *unused, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)unused;
    PowerCutFile *p = (PowerCutFile *)file;
    p->real = (sqlite3_file *)&p[1];
    p->tracked = -1;
    int code = root->xOpen(root, name, p->real, flags, outFlags);
    file->pMethods = p->real->pMethods ? &methods : NULL;
    if (code == SQLITE_OK && name != NULL &&
        (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) != 0) {
        pthread_mutex_lock(&lock);
        const char *role = (flags & SQLITE_OPEN_MAIN_DB) ? "database" : (flags & SQLITE_OPEN_WAL) ? "log" : "journal";
        p->tracked = track(name, role, p->real);
        pthread_mutex_unlock(&lock);
        if (p->tracked < 0) {
            // Untracked writes would survive the cut: no power cut can be modelled then.
            if (file->pMethods) pcClose(file);
            file->pMethods = NULL;
            return SQLITE_CANTOPEN;
        }
    }
    return code;
}

static int pcDelete(sqlite3_vfs *unused, const char *name, int syncDirectory) {
    (void)unused;
    int code = root->xDelete(root, name, syncDirectory);
    if (code == SQLITE_OK) {
        // Durable at once: a file made again at the path starts with nothing pending.
        pthread_mutex_lock(&lock);
        for (int i = 0; i < maxTrackedFiles; i++) {
            if (tracked[i].path != NULL && strcmp(tracked[i].path, name) == 0) {
                forget(&tracked[i]);
                tracked[i].syncedSize = 0;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    return code;
}

static int pcAccess(sqlite3_vfs *unused, const char *name, int flags, int *result) {
    (void)unused;
    return root->xAccess(root, name, flags, result);
}

static int pcFullPathname(sqlite3_vfs *unused, const char *name, int size, char *output) {
    (void)unused;
    return root->xFullPathname(root, name, size, output);
}

static void *pcDlOpen(sqlite3_vfs *unused, const char *name) {
    (void)unused;
    return root->xDlOpen(root, name);
}

static void pcDlError(sqlite3_vfs *unused, int size, char *message) {
    (void)unused;
    root->xDlError(root, size, message);
}

static void (*pcDlSym(sqlite3_vfs *unused, void *library, const char *symbol))(void) {
    (void)unused;
    return root->xDlSym(root, library, symbol);
}

static void pcDlClose(sqlite3_vfs *unused, void *library) {
    (void)unused;
    root->xDlClose(root, library);
}

static int pcRandomness(sqlite3_vfs *unused, int size, char *output) {
    (void)unused;
    return root->xRandomness(root, size, output);
}

static int pcSleep(sqlite3_vfs *unused, int microseconds) {
    (void)unused;
    return root->xSleep(root, microseconds);
}

static int pcCurrentTime(sqlite3_vfs *unused, double *now) {
    (void)unused;
    return root->xCurrentTime(root, now);
}

static int pcGetLastError(sqlite3_vfs *unused, int size, char *message) {
    (void)unused;
    return root->xGetLastError(root, size, message);
}

static int pcCurrentTimeInt64(sqlite3_vfs *unused, sqlite3_int64 *now) {
    (void)unused;
    return root->xCurrentTimeInt64(root, now);
}

int powercut_install(long long at, int atSyncs, unsigned long long seed, int status) {
    root = sqlite3_vfs_find(NULL);
    if (root == NULL) return SQLITE_ERROR;
    cutAt = at;
    cutAtSyncs = atSyncs;
    randomState = seed ? seed : 0x9E3779B97F4A7C15ULL;
    exitStatus = status;
    vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(PowerCutFile) + root->szOsFile,
        .mxPathname = root->mxPathname,
        .zName = "powercut",
        .xOpen = pcOpen,
        .xDelete = pcDelete,
        .xAccess = pcAccess,
        .xFullPathname = pcFullPathname,
        .xDlOpen = pcDlOpen,
        .xDlError = pcDlError,
        .xDlSym = pcDlSym,
        .xDlClose = pcDlClose,
        .xRandomness = pcRandomness,
        .xSleep = pcSleep,
        .xCurrentTime = pcCurrentTime,
        .xGetLastError = pcGetLastError,
        .xCurrentTimeInt64 = pcCurrentTimeInt64,
    };
    return sqlite3_vfs_register(&vfs, 1);
}

void powercut_arm(long long eventsFromNow) {
    pthread_mutex_lock(&lock);
    cutAt = events + eventsFromNow;
    cutAtSyncs = 0;
    pthread_mutex_unlock(&lock);
}
