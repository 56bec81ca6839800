// Copies the files tsc does not emit (SQL migrations) into dist/.
import fs from 'node:fs';

fs.mkdirSync('dist/db/migrations', { recursive: true });
for (const file of fs.readdirSync('src/db/migrations')) {
  if (file.endsWith('.sql')) fs.copyFileSync(`src/db/migrations/${file}`, `dist/db/migrations/${file}`);
}
