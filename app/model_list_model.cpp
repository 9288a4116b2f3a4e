#include "app/model_list_model.h"

#include <QDir>
#include <QFileInfo>

#include "app/model_bar.h"
#include "engine/gguf/gguf_file.h"
#include "models/weight_format.h"

namespace hearth::app {

ModelListModel::ModelListModel(models::Catalog catalog, QObject* parent)
    : QAbstractTableModel(parent), catalog_(std::move(catalog)) {
  refresh();
}

int ModelListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ModelListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

// A GGUF the catalog does not know: what its header says (the file is mapped, not read).
ModelListModel::Row ModelListModel::fileRow(const QString& path, bool in_models_dir) const {
  Row row;
  row.path = path;
  row.installed = true;
  row.in_models_dir = in_models_dir;
  row.size = QFileInfo(path).size();
  if (auto file = gguf::GgufFile::open(path.toStdString())) {
    row.format = QString::fromStdString(models::weight_format_of(**file));
    if (auto arch = (*file)->get_string("general.architecture"))
      row.architecture = QString::fromUtf8(arch->data(), static_cast<qsizetype>(arch->size()));
    if (auto lic = (*file)->get_string("general.license"))
      row.license = QString::fromUtf8(lic->data(), static_cast<qsizetype>(lic->size()));
  } else {
    row.format = tr("unreadable: %1").arg(QString::fromStdString(file.error().message));
  }
  return row;
}

void ModelListModel::refresh() {
  beginResetModel();
  rows_.clear();
  const QDir dir(QString::fromStdString(models::models_dir().string()));
  QStringList catalog_files;
  for (const auto& e : catalog_.entries) {
    Row row;
    row.entry = e;
    row.path = dir.filePath(QString::fromStdString(e.file));
    row.installed = QFileInfo(row.path).isFile();
    row.size = row.installed ? QFileInfo(row.path).size() : static_cast<qint64>(e.size_bytes);
    row.format = QString::fromStdString(e.quantization);
    row.architecture = QString::fromStdString(e.architecture);
    row.license = QString::fromStdString(e.license);
    catalog_files << QString::fromStdString(e.file);
    rows_.push_back(std::move(row));
  }
  for (const QFileInfo& f : dir.entryInfoList({QStringLiteral("*.gguf")}, QDir::Files, QDir::Name)) {
    if (!catalog_files.contains(f.fileName())) rows_.push_back(fileRow(f.filePath(), true));
  }
  for (const QString& path : opened_) {
    if (QFileInfo(path).isFile() && QFileInfo(path).absolutePath() != dir.absolutePath()) {
      rows_.push_back(fileRow(path, false));
    }
  }
  endResetModel();
}

void ModelListModel::addOpenedFile(const QString& path) {
  if (path.isEmpty() || opened_.contains(path) || path.contains(QLatin1String("://"))) return;
  opened_ << path;
}

void ModelListModel::setInstalling(const QString& catalog_name, int percent) {
  installing_ = catalog_name;
  percent_ = percent;
  const int row = rowOfCatalogName(catalog_name);
  if (row >= 0) emit dataChanged(index(row, kStatus), index(row, kStatus));
}

const models::CatalogEntry* ModelListModel::entryAt(int row) const {
  if (row < 0 || row >= rowCount() || !rows_[static_cast<std::size_t>(row)].entry) return nullptr;
  return &*rows_[static_cast<std::size_t>(row)].entry;
}

int ModelListModel::rowOfCatalogName(const QString& name) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].entry && QString::fromStdString(rows_[i].entry->name) == name) return static_cast<int>(i);
  }
  return -1;
}

QString ModelListModel::statusText(const Row& row) const {
  if (row.entry && QString::fromStdString(row.entry->name) == installing_ && percent_ >= 0) {
    return tr("Installing\u2026 %1%").arg(percent_);
  }
  if (!row.installed) return tr("Not installed");
  if (!row.in_models_dir) return tr("Opened from %1").arg(QFileInfo(row.path).absolutePath());
  return row.entry ? tr("Installed") : tr("Installed (not in the catalog)");
}

QVariant ModelListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case kPathRole:
      return row.path;
    case kInstalledRole:
      return row.installed;
    case kCatalogNameRole:
      return row.entry ? QString::fromStdString(row.entry->name) : QString();
    case kInModelsDirRole:
      return row.in_models_dir;
    case Qt::ToolTipRole:
      return row.path;
    case Qt::DisplayRole:
      break;
    default:
      return {};
  }
  switch (index.column()) {
    case kName:
      return row.entry ? QString::fromStdString(row.entry->display_name) : QFileInfo(row.path).fileName();
    case kStatus:
      return statusText(row);
    case kSize:
      return format_bytes(row.size);
    case kFormat:
      return row.format;
    case kArchitecture:
      return row.architecture;
    case kLicense:
      return row.license.isEmpty() ? tr("unknown") : row.license;
    default:
      return {};
  }
}

QVariant ModelListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kName:
      return tr("Model");
    case kStatus:
      return tr("Status");
    case kSize:
      return tr("Size");
    case kFormat:
      return tr("Format");
    case kArchitecture:
      return tr("Architecture");
    case kLicense:
      return tr("Licence");
    default:
      return {};
  }
}

}  // namespace hearth::app
