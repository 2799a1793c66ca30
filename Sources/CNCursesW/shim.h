#ifndef UPLOADMON_CNCURSESW_SHIM_H
#define UPLOADMON_CNCURSESW_SHIM_H

// SwiftPM drops pkg-config's -D flags; without this, the wide-character API is hidden.
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#include <locale.h>
#include <wchar.h>
// A missing header says which Debian package brings it.
#if defined(__has_include) && !__has_include(<ncursesw/curses.h>)
#error "ncursesw/curses.h not found: install Debian's libncurses-dev (apt-get install libncurses-dev)"
#endif
#include <ncursesw/curses.h>

// Macros and globals Swift cannot import (or rejects in Swift 6) wrapped as functions.
static inline WINDOW *um_stdscr(void) { return stdscr; }
static inline int um_lines(void) { return LINES; }
static inline int um_cols(void) { return COLS; }
static inline int um_colors(void) { return COLORS; }
static inline int um_color_pairs(void) { return COLOR_PAIRS; }
static inline void um_flush_stdout(void) { fflush(stdout); }
static inline attr_t um_a_bold(void) { return A_BOLD; }
static inline attr_t um_a_dim(void) { return A_DIM; }
static inline attr_t um_a_reverse(void) { return A_REVERSE; }
static inline attr_t um_a_underline(void) { return A_UNDERLINE; }
static inline attr_t um_a_normal(void) { return A_NORMAL; }
static inline int um_key_code_yes(void) { return KEY_CODE_YES; }

// Draws one cell: a grapheme of up to a few code points with attributes and a colour pair.
static inline int um_put_cell(int y, int x, const wchar_t *text, attr_t attrs, short pair) {
    cchar_t cell;
    if (setcchar(&cell, text, attrs, pair, NULL) != OK) return ERR;
    return mvadd_wch(y, x, &cell);
}

static inline int um_get_wch(wint_t *out) { return get_wch(out); }

// The mouse: clicks of the first button and the wheel (buttons 4 and 5), reported at once
// (no wait to tell a click from a double click: the monitor tells them apart itself). Releases
// are asked for too, though not used: without them curses takes a second press for the button
// still held, and drops it; and a press read with its release comes as a click.
static inline int um_mouse_on(void) {
    mmask_t wanted = BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED;
#ifdef BUTTON5_PRESSED
    wanted |= BUTTON5_PRESSED;
#endif
    mouseinterval(0);
    return mousemask(wanted, NULL) != 0;
}
// 0: none; 1: first button pressed; 4: wheel up; 5: wheel down. The cell in *x, *y.
static inline int um_mouse_event(int *x, int *y) {
    MEVENT event;
    if (getmouse(&event) != OK) return 0;
    *x = event.x;
    *y = event.y;
    // A press and its release read together come as one click; two as a double click.
    if (event.bstate & BUTTON1_DOUBLE_CLICKED) return 2;
    if (event.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return 1;
    if (event.bstate & BUTTON4_PRESSED) return 4;
#ifdef BUTTON5_PRESSED
    if (event.bstate & BUTTON5_PRESSED) return 5;
#endif
    return 0;
}

// Where curses believes the terminal's cursor is (after doupdate).
static inline int um_cursor_y(void) { return getcury(curscr); }
static inline int um_cursor_x(void) { return getcurx(curscr); }
static inline int um_redraw_lines(int y, int n) { return wredrawln(stdscr, y, n); }
static inline int um_flag(const char *name) { return tigetflag(name); }

#endif
