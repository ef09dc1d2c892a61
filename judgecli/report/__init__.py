"""Reports: a finished run's summary (and results) rendered for people and CI systems.
They return text; the store writes it.

- `markdown`: the headline, report.md, and the terminal tables
- `pairwise`: a pairwise run's tables: the result, the judge's biases (agents' tool calls
  too), categories, judges
- `align`: report.md of `judge align`: baseline against aligned on the sealed test
- `cells`: sections, number and interval formatting shared by every renderer
- `calibrate`, `refine`: those commands' headline numbers and tables
- `cascade`: the tiered run's tables (--screen)
- `length_control`: the length-controlled win rate's rows in a pairwise report
- `arena_length`: an arena's length-controlled win rates, a table of its report
- `checklist`: a checklist run's score, its tags, and each case's items met or not
- `stability`: the judge's agreement with itself over K asks of each case (--repeats)
- `tool_calls`: the tool-call check's numbers, each case's matched, missed and extra calls
- `html`: report.html, one self-contained page
- `figures`: report.html's charts of each command's numbers
- `html_cases`, `html_calls`: report.html's table of every case, and each case's judge calls
- `images`: thumbnails of the images a case showed the judge, in its case view
- `html_flips`: a drift page's searchable table of the flipped cases
- `svg`, `charts`, `bars`, `forest`: the inline SVG charts
- `escape`: the HTML, SVG and XML escapes, table-driven
- `junit`, `junit_arena`: results.junit.xml for CI test reporters (an arena's)
- `junit_xml`: the JUnit XML they are written as
- `decision`: the gate's verdict line and checks
- `arena`, `weighted`: an arena's leaderboard; the probability-weighted rates
- `drift`: `judge drift`'s headline, tables, report.md and report.html
- `qualify`: `judge qualify`'s headline, table of sets, report.md, report.html, JUnit
- `probe`: `judge probe`'s per-probe lines, report.md, report.html, JUnit
- `compare`: `judge report RUN_A RUN_B`'s tables (each metric in A and B, the paired change)
"""
